"""GET /teams/{id}/ledger/export?format=csv|parquet&period=YYYY-MM|YYYY-Qn: the team's ledger
entries posted in the period as FinOps FOCUS rows (docs/exports.md). Members read; another
team is a 404; a bad format or period is a 400 naming the parameter.

CSV streams (`StreamingHttpResponse` over the database iterator); Parquet is written in row
groups to a temporary file and streamed from it (the format's footer comes last)."""

from __future__ import annotations

import re
import tempfile
from typing import Any

from django.http import FileResponse, StreamingHttpResponse
from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import exceptions
from rest_framework.negotiation import BaseContentNegotiation
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request
from rest_framework.views import APIView

from campaigns.models import Team, team_ids_for
from ledger.domain import team_budget
from ledger.operations import export_writers
from ledger.selectors.ledger_export import export_rows

FORMATS = {"csv": "text/csv; charset=utf-8", "parquet": "application/vnd.apache.parquet"}


class JSONErrorsOnly(BaseContentNegotiation):
    """`format` is this view's own parameter (csv or parquet), not DRF's renderer override: the
    body is written here, and refusals answer JSON."""

    def select_parser(self, request: Any, parsers: Any) -> Any:
        return parsers[0] if parsers else None

    def select_renderer(self, request: Any, renderers: Any, format_suffix: Any = None) -> Any:
        return (JSONRenderer(), JSONRenderer.media_type)


def parse_query(request: Request) -> tuple[str, team_budget.PeriodKind, Any]:
    fmt = request.query_params.get("format", "csv")
    if fmt not in FORMATS:
        raise exceptions.ValidationError({"format": [f"{fmt!r}: use csv or parquet"]})
    text = request.query_params.get("period")
    if not text:
        raise exceptions.ValidationError({"period": ["required: YYYY-MM or YYYY-Qn"]})
    try:
        kind, start = team_budget.parse_period(text)
    except ValueError as exc:
        raise exceptions.ValidationError({"period": [str(exc)]}) from None
    return fmt, kind, start


def safe_filename_part(text: str) -> str:
    """`text` as ASCII letters, digits, `.`, `_` and `-` only: nothing in a team's name (a
    quote, a line break, a semicolon) can end the header's `filename` or start another."""
    cleaned = re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-.")
    return cleaned[:80] or "team"


def export_response(team: Team, fmt: str, kind: team_budget.PeriodKind, start: Any) -> Any:
    """The export as a streamed response (the admin's link answers the same)."""
    label = team_budget.period_label(kind, start)
    filename = f"ledger-{safe_filename_part(team.name)}-{label}.{fmt}"
    rows = export_rows(team.pk, kind, start)
    if fmt == "csv":
        response: Any = StreamingHttpResponse(
            export_writers.csv_chunks(rows), content_type=FORMATS[fmt]
        )
    else:
        # FileResponse closes it once sent; the file is gone from the disk from the start.
        spool = tempfile.TemporaryFile()  # noqa: SIM115
        export_writers.write_parquet(rows, spool)
        spool.seek(0)
        response = FileResponse(spool, content_type=FORMATS[fmt])
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


class TeamLedgerExport(APIView):
    content_negotiation_class = JSONErrorsOnly

    @extend_schema(
        parameters=[
            OpenApiParameter("format", str, enum=list(FORMATS), description="csv (default)"),
            OpenApiParameter("period", str, required=True, description="YYYY-MM or YYYY-Qn"),
        ],
        responses={(200, "text/csv"): OpenApiTypes.STR},
    )
    def get(self, request: Request, id: int) -> Any:
        teams = Team.objects.all()
        if not getattr(request.user, "is_superuser", False):
            teams = teams.filter(pk__in=team_ids_for(request.user))
        team = get_object_or_404(teams, pk=id)
        fmt, kind, start = parse_query(request)
        return export_response(team, fmt, kind, start)
