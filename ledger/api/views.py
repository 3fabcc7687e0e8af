"""The ledger API: entries, summary, deliverables, observed hours and closing reports.

Every lookup goes through `campaigns.api.permissions` (another team's campaign is a 404), writes
need a planner or owner of the campaign's team (TeamRole, checked on the campaign), and ingest
keys are refused everywhere here (no view sets `allow_ingest`).
"""

from __future__ import annotations

import re
from typing import Any

from django.core.exceptions import ValidationError as DjangoValidationError
from django.db.models import QuerySet
from django.http import HttpResponse
from django.shortcuts import get_object_or_404
from django.urls import reverse
from drf_spectacular.openapi import AutoSchema
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import generics, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from campaigns.api.permissions import campaign_for, campaigns_for
from campaigns.models import Campaign, Stage
from campaigns.services.campaigns import real_user
from campaigns.services.observed_hours import (
    check_takes_observed_hours,
    planned_hours_of,
    record_observed_hours,
)
from ledger import services
from ledger.api.serializers import (
    DeliverableSerializer,
    DetailSerializer,
    LedgerEntrySerializer,
    LedgerSummarySerializer,
    ObservedHoursSerializer,
    ObservedStageSerializer,
    ReportSerializer,
    ReportStartedSerializer,
    as_drf_error,
)
from ledger.domain.cost_per_deliverable import MixedCurrencyError
from ledger.models import OUT_OF_DATE_NOTE, Deliverable, LedgerEntry, Report, ReportStatus
from ledger.rendering.closing_report import render_json
from ledger.selectors.ledger_summary import ledger_summary

READ_AND_APPEND = ["get", "post", "head", "options"]


class CampaignScopedMixin:
    """The campaign named in the URL, found only among the caller's (404 otherwise)."""

    request: Any
    kwargs: dict[str, Any]

    def get_campaign(self) -> Campaign:
        if not hasattr(self, "_campaign"):
            self._campaign = campaign_for(self.request, self.kwargs["campaign_id"])
        return self._campaign

    def get_writable_campaign(self) -> Campaign:
        campaign = self.get_campaign()
        # TeamRole's object check: planners and owners of this campaign's team only.
        self.check_object_permissions(self.request, campaign)  # type: ignore[attr-defined]
        return campaign


class AppendOnlyCreateMixin(CampaignScopedMixin):
    """Resolve and authorize the campaign before reading the body: 404/403 come before 400."""

    def create(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        campaign = self.get_writable_campaign()
        serializer = self.get_serializer(data=request.data)  # type: ignore[attr-defined]
        serializer.is_valid(raise_exception=True)
        serializer.save(campaign=campaign, user=request.user)
        return Response(serializer.data, status=status.HTTP_201_CREATED)


class LedgerEntryList(AppendOnlyCreateMixin, generics.ListCreateAPIView[LedgerEntry]):
    """GET, POST /campaigns/{id}/ledger/: append-only entries; PUT, PATCH, DELETE → 405."""

    serializer_class = LedgerEntrySerializer
    http_method_names = READ_AND_APPEND

    def get_queryset(self) -> QuerySet[LedgerEntry]:
        return (
            LedgerEntry.objects.filter(campaign=self.get_campaign())
            .select_related("created_by", "reversed_by")
            .order_by("created_at", "id")
        )


class LedgerEntryDetail(CampaignScopedMixin, generics.RetrieveAPIView[LedgerEntry]):
    """GET /campaigns/{id}/ledger/{entry}/: read only, an entry is never changed."""

    serializer_class = LedgerEntrySerializer

    def get_queryset(self) -> QuerySet[LedgerEntry]:
        return LedgerEntry.objects.filter(campaign=self.get_campaign()).select_related(
            "created_by", "reversed_by"
        )


class LedgerSummaryView(CampaignScopedMixin, APIView):
    """GET /campaigns/{id}/ledger/summary/: totals and the cost per accepted deliverable."""

    @extend_schema(responses={200: LedgerSummarySerializer, 409: DetailSerializer})
    def get(self, request: Request, campaign_id: int) -> Response:
        campaign = self.get_campaign()
        try:
            summary = ledger_summary(campaign)
        except MixedCurrencyError as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_409_CONFLICT)
        # For a research decision the conclusion is the unit bought, not an invented one.
        return Response({**summary.to_json_dict(), "conclusion": campaign.conclusion or None})


class DeliverableList(AppendOnlyCreateMixin, generics.ListCreateAPIView[Deliverable]):
    """GET, POST /campaigns/{id}/deliverables/: the server checks and answers the verdict."""

    serializer_class = DeliverableSerializer
    http_method_names = READ_AND_APPEND

    def get_queryset(self) -> QuerySet[Deliverable]:
        return (
            Deliverable.objects.filter(campaign=self.get_campaign())
            .select_related("run")
            .prefetch_related("files")
            .order_by("created_at", "id")
        )


class DeliverableDetail(CampaignScopedMixin, generics.RetrieveAPIView[Deliverable]):
    serializer_class = DeliverableSerializer

    def get_queryset(self) -> QuerySet[Deliverable]:
        return (
            Deliverable.objects.filter(campaign=self.get_campaign())
            .select_related("run")
            .prefetch_related("files")
        )


class ObservedHoursView(CampaignScopedMixin, APIView):
    """POST /campaigns/{id}/stages/{sid}/observed/: after commit; the plan stays frozen."""

    @extend_schema(
        request=ObservedHoursSerializer,
        responses={200: ObservedStageSerializer, 409: DetailSerializer},
    )
    def post(self, request: Request, campaign_id: int, stage_id: int) -> Response:
        campaign = self.get_writable_campaign()
        stage = get_object_or_404(
            Stage.objects.select_related("campaign"), campaign=campaign, pk=stage_id
        )
        # The state conflict comes first: no body makes a draft comparable with a baseline, and
        # a closed campaign takes none (PlanFrozen / CampaignClosed → 409).
        check_takes_observed_hours(campaign)
        body = ObservedHoursSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        try:
            stage = record_observed_hours(
                stage=stage, acting_user=real_user(request.user), **body.validated_data
            )
        except DjangoValidationError as exc:
            raise as_drf_error(exc) from exc
        context = {"planned_hours": planned_hours_of(stage)}
        return Response(ObservedStageSerializer(stage, context=context).data)


class CampaignReportList(CampaignScopedMixin, generics.ListAPIView[Report]):
    """GET /campaigns/{id}/reports/ lists them; POST starts one → 202 {"id", "status"}."""

    serializer_class = ReportSerializer
    http_method_names = READ_AND_APPEND

    def get_queryset(self) -> QuerySet[Report]:
        return Report.objects.filter(campaign=self.get_campaign()).defer("html", "markdown", "data")

    @extend_schema(request=None, responses={202: ReportStartedSerializer})
    def post(self, request: Request, campaign_id: int) -> Response:
        campaign = self.get_writable_campaign()
        report = services.request_report(campaign=campaign, acting_user=real_user(request.user))
        # With Celery eager (the embedded shape) the report may be ready already.
        report.refresh_from_db(fields=["status"])
        body = {
            "id": report.pk,
            "status": report.status,
            "url": request.build_absolute_uri(reverse("ledger:report-detail", args=[report.pk])),
        }
        return Response(body, status=status.HTTP_202_ACCEPTED)


def scoped_reports(user: Any) -> QuerySet[Report]:
    return Report.objects.filter(campaign__in=campaigns_for(user))


class ReportOfCampaignMixin:
    kwargs: dict[str, Any]

    def ingest_campaign_id(self) -> int | None:
        """For TeamRole: an ingest key is told 404 for another campaign's report, 403 for its
        own campaign's (ingest keys read no reports)."""
        return (
            Report.objects.filter(pk=self.kwargs["pk"])
            .values_list("campaign_id", flat=True)
            .first()
        )


class ReportDetail(ReportOfCampaignMixin, generics.RetrieveAPIView[Report]):
    """GET /reports/{id}/: status, and links to the three renderings once ready."""

    serializer_class = ReportSerializer

    def get_queryset(self) -> QuerySet[Report]:
        return scoped_reports(self.request.user).defer("html", "markdown", "data")


RENDERINGS = {
    "html": ("text/html; charset=utf-8", "html", "inline"),
    "markdown": ("text/markdown; charset=utf-8", "md", "attachment"),
    "json": ("application/json", "json", "attachment"),
}


def _marked_out_of_date(content: str, rendering: str) -> str:
    """The stored rendering with the out-of-date note on top (the stored text is unchanged)."""
    if rendering == "markdown":
        return f"> **{OUT_OF_DATE_NOTE}**\n\n{content}"
    note = (
        '<p id="out-of-date" style="background:#fde8e8;padding:8px">'
        f"<strong>{OUT_OF_DATE_NOTE}</strong></p>"
    )
    body = re.search(r"<body[^>]*>", content)
    return content[: body.end()] + note + content[body.end() :] if body else note + content


def report_download(report: Report, rendering: str) -> HttpResponse:
    """One rendering of a ready report as a file (the API and the admin both serve it)."""
    content_type, extension, disposition = RENDERINGS[rendering]
    if rendering == "json":
        data = report.data or {}
        content = render_json({**data, "out_of_date": True} if report.out_of_date else data)
    else:
        content = getattr(report, rendering)
        if report.out_of_date:
            content = _marked_out_of_date(content, rendering)
    response = HttpResponse(content, content_type=content_type)
    name = f"closing-report-campaign-{report.campaign_id}-{report.pk}.{extension}"
    response["Content-Disposition"] = f'{disposition}; filename="{name}"'
    if rendering == "html":
        # The report is self-contained (inline CSS and SVG): nothing else may load or run.
        response["Content-Security-Policy"] = (
            "default-src 'none'; style-src 'unsafe-inline'; img-src data:; frame-ancestors 'none'"
        )
    return response


class ReportRenderingSchema(AutoSchema):
    """One view serves three paths: each path documents its own media type and body (the JSON
    rendering is an object, the HTML and Markdown ones text)."""

    def get_response_serializers(self) -> Any:
        rendering = self.path.rstrip("/").rsplit("/", 1)[-1]
        media_type = RENDERINGS[rendering][0].split(";")[0]
        body = OpenApiTypes.OBJECT if rendering == "json" else OpenApiTypes.STR
        return {
            (200, media_type): OpenApiResponse(body, description="The rendering, as a file."),
            409: DetailSerializer,
        }


class ReportRendering(ReportOfCampaignMixin, APIView):
    """GET /reports/{id}/html|markdown|json/: the stored rendering; 409 until it is ready."""

    schema = ReportRenderingSchema()

    def perform_content_negotiation(self, request: Request, force: bool = False) -> Any:
        # The body is a file of a fixed type, whatever Accept says; errors are JSON.
        return super().perform_content_negotiation(request, force=True)

    def get(self, request: Request, pk: int, rendering: str) -> Any:
        report = get_object_or_404(scoped_reports(request.user), pk=pk)
        if report.status != ReportStatus.READY:
            return Response(
                {"detail": f"the report is {report.status}, not ready", "status": report.status},
                status=status.HTTP_409_CONFLICT,
            )
        return report_download(report, rendering)
