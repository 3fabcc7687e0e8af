"""The runs table in the admin (docs/domain.md §5.10): the runs of one campaign or of every
campaign of the caller's teams, with the columns the person chose (remembered for them), sorted
by any column, filtered by status, kind, item, tag and configuration value, and grouped by item
or a configuration key with a metric's mean ± spread per group. It replaces Django's run
changelist; the reads are campaigns/selectors/runs_table.py, the remembered columns
campaigns/services/run_table.py."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect, QueryDict
from django.template.response import TemplateResponse
from django.urls import reverse

from campaigns.admin.tenancy import caller_team_ids
from campaigns.domain import runs_table as table
from campaigns.domain.downsampling import token
from campaigns.models import Campaign, Run, RunKind, RunStatus
from campaigns.selectors import runs_table as reads
from campaigns.services.run_table import remember_columns

# The query parameters the page keeps from one click to the next.
_STATE = ("campaign", "status", "kind", "item", "tag", "config", "sort", "group", "gm")


def _number(text: str | None) -> int | None:
    return int(text) if text and text.isdigit() else None


def _scope(request: HttpRequest) -> reads.Scope:
    teams = tuple(caller_team_ids(request))
    if request.user.is_superuser:
        teams = tuple(Campaign.objects.values_list("team_id", flat=True).distinct())
    return reads.Scope(teams, _number(request.GET.get("campaign")))


def _filters(query: QueryDict) -> reads.Filters:
    return reads.Filters(
        status=query.get("status", "") if query.get("status") in RunStatus.values else "",
        kind=query.get("kind", "") if query.get("kind") in RunKind.values else "",
        item=_number(query.get("item")),
        tag=query.get("tag", "").strip()[:250],
        config=query.get("config", "").strip()[:500] if "=" in query.get("config", "") else "",
    )


def table_view(model_admin: Any, request: HttpRequest) -> HttpResponse:
    """The page (GET) and the choice of columns (POST, remembered for the person)."""
    if request.method == "POST":
        return _remember(request)
    scope = _scope(request)
    columns = reads.layout_of(request.user)
    sort = table.parse_sort(request.GET.get("sort", ""), columns)
    filters = _filters(request.GET)
    found = reads.page_of_runs(scope, columns, sort, filters, _number(request.GET.get("page")) or 1)
    context = {
        **model_admin.admin_site.each_context(request),
        "title": "Runs",
        "opts": Run._meta,
        "columns": [_header(c, sort, request.GET) for c in columns],
        "rows": [_row(run, columns) for run in found.runs],
        "found": found,
        "filters": filters,
        "choices": reads.choices(scope),
        "chosen": {c.key for c in columns},
        "campaigns": Campaign.objects.filter(team_id__in=scope.team_ids).values_list("id", "title"),
        "scope": scope,
        "statuses": RunStatus.choices,
        "kinds": RunKind.choices,
        "metric_columns": [c for c in columns if c.kind == "metric"],
        "config_columns": [c for c in columns if c.kind == "config"],
        "grouped": _grouped(request, scope, filters, columns, found.lower_is_better),
        "state": request.GET,
        "pages": _page_links(request.GET, found),
        "field_choices": [table.parse_column(f"field:{n}") for n in table.RUN_FIELDS][1:],
    }
    return TemplateResponse(request, "admin/campaigns/run/table.html", context)


def _remember(request: HttpRequest) -> HttpResponse:
    try:
        remember_columns(acting_user=request.user, columns=request.POST.getlist("columns"))
    except ValidationError as exc:
        messages.error(request, " ".join(exc.messages))
    kept = {k: request.POST[k] for k in _STATE if request.POST.get(k)}
    url = reverse("admin:campaigns_run_changelist")
    return HttpResponseRedirect(f"{url}?{urlencode(kept)}" if kept else url)


def _link(query: QueryDict, **changes: str) -> str:
    kept = {**{k: query[k] for k in _STATE if query.get(k)}, **changes}
    return "?" + urlencode({k: v for k, v in kept.items() if v})


def _header(column: table.Column, sort: table.Sort, query: QueryDict) -> dict[str, Any]:
    here = sort.column.key == column.key
    flip = f"{column.key}" if here and sort.descending else f"-{column.key}"
    if not here and column.kind == "field" and column.name in ("name", "campaign", "item"):
        flip = column.key  # names read A to Z first
    arrow = (" ▼" if sort.descending else " ▲") if here else ""
    return {"column": column, "label": column.label + arrow, "url": _link(query, sort=flip)}


def _row(run: Run, columns: tuple[table.Column, ...]) -> dict[str, Any]:
    cells = [{"text": _cell(run, i, c), "num": c.kind == "metric"} for i, c in enumerate(columns)]
    url = reverse("admin:campaigns_run_change", args=[run.pk])
    return {"run": run, "url": url, "cells": cells[1:]}


def _cell(run: Run, i: int, column: table.Column) -> str:
    if column.kind == "metric":
        non_finite = getattr(run, f"t{i}", "") if column.which == "latest" else ""
        value = getattr(run, f"c{i}", None)
        return non_finite or ("—" if value is None else token(value) or f"{value:.5g}")
    if column.kind == "config":
        value = getattr(run, f"c{i}", None)
        return "—" if value is None else str(value)
    return _field(run, column.name)


def _field(run: Run, name: str) -> str:
    if name == "name":
        return run.display_name
    if name == "campaign":
        return run.campaign.title
    if name == "item":
        return run.variant.name if run.variant else "—"
    if name in ("kind", "status"):
        return str(getattr(run, f"get_{name}_display")())
    if name in ("created_at", "finished_at"):
        when = getattr(run, name)
        return when.strftime("%Y-%m-%d %H:%M") if when else "—"
    if name == "tags":
        return ", ".join(f"{k}={v}" for k, v in sorted(run.tags.items()) if "." not in k) or "—"
    value = getattr(run, name)
    return "—" if value is None else str(value)


def _grouped(
    request: HttpRequest,
    scope: reads.Scope,
    filters: reads.Filters,
    columns: tuple[table.Column, ...],
    lower: dict[str, bool],
) -> dict[str, Any] | None:
    """The groups' table when the page asks for one (``group`` and a metric column ``gm``)."""
    by = request.GET.get("group", "")
    metric = next((c for c in columns if c.key == request.GET.get("gm")), None)
    if by not in ("item", *(c.key for c in columns if c.kind == "config")) or metric is None:
        return None
    rows = [
        {
            "group": group,
            "words": table.spread_in_words(group.found),
            "url": _link(request.GET, group="", gm="", item=group.value)
            if by == "item"
            else _link(request.GET, group="", gm="", config=f"{by[7:]}={group.value}"),
        }
        for group in reads.groups(scope, filters, by, metric, lower)
    ]
    label = "item" if by == "item" else by.removeprefix("config:")
    return {"by": label, "metric": metric, "rows": rows}


def _page_links(query: QueryDict, found: reads.Page) -> list[dict[str, Any]]:
    if found.pages == 1:
        return []
    shown = sorted({1, found.pages, *range(max(1, found.page - 2), found.page + 3)})
    return [
        {"number": n, "url": _link(query, page=str(n)), "here": n == found.page}
        for n in shown
        if n <= found.pages
    ]
