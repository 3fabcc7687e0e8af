"""What the campaign's pages show beyond Django's change form: the plan's schedule and Gantt
chart above the tables, the summary of every error on the page, the compared runs, the close
form's outcome and the once-shown ingest key. Pure reading and rendering; writes go through
campaigns/services."""

from __future__ import annotations

import secrets
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from django.core.exceptions import ValidationError
from django.http import Http404, HttpRequest, HttpResponse
from django.template.loader import render_to_string
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils.safestring import mark_safe

from campaigns.admin.forms import CloseCampaignForm, refusal_to_form
from campaigns.charts.curves import PALETTE, Overlaid, overlay_svg
from campaigns.charts.interactive import chart_payload
from campaigns.domain.config_diff import differing_keys
from campaigns.domain.downsampling import token
from campaigns.domain.metric_direction import best_value, loss_like
from campaigns.models import Campaign, PlanFrozen, Run, RunsStillRunning
from campaigns.selectors import run_metrics
from campaigns.selectors.plan_summary import tier_counts
from campaigns.services.campaigns import close_campaign


def plan_overview(campaign: Campaign) -> dict[str, Any]:
    """The summary above the plan's tables: the items per tier. Its hours, headline, Gantt and
    warnings are the timeline's (the template's `timeline_summary` tag)."""
    return {"summary": {"tiers": tier_counts(campaign)}}


def row_pages(campaign: Campaign, page: int, per_page: int) -> dict[str, Any]:
    """The pager above the plan's tables when they hold more rows than one page shows (the
    items' and the stages' tables are paged alike: campaigns/admin/inlines.py). Two counts."""
    rows = max(campaign.items.count(), campaign.stages.count())
    pages = max(1, -(-rows // per_page))
    if pages == 1:
        return {}
    page = min(page, pages)
    return {
        "row_pages": {
            "page": page,
            "pages": list(range(1, pages + 1)),
            "first": (page - 1) * per_page + 1,
            "last": min(rows, page * per_page),
            "rows": rows,
        }
    }


def compared_runs(campaign: Campaign, requested: str | None) -> dict[str, Any]:
    """One metric (``requested``, default the one most runs log) of every run of the campaign
    on shared axes, a distinct colour per run (pilots dashed), each series downsampled
    (campaigns/domain/downsampling.py, which keeps each run's last point and its extremes, so
    the table's last and best are exact); the stop rule's threshold for the metric as a line;
    the configuration keys that differ between the runs. An unknown metric is a 404.
    Queries: the metric names, the runs, the threshold rule, and one for every series."""
    names = run_metrics.campaign_metric_names(campaign.pk)
    metric = _chosen_metric(names, requested)
    runs = (
        Run.objects.filter(campaign=campaign)
        .select_related("variant")
        .order_by("variant__name", "kind", "run_id")
    )
    by_run = run_metrics.campaign_series(campaign.pk, metric) if metric else {}
    rule = run_metrics.threshold_rule(campaign.pk, metric) if metric else None
    lower = loss_like(metric, rule.comparator if rule is not None else "")
    legend, lines = _overlaid(runs, by_run, lower)
    threshold = rule.threshold if rule is not None else None
    return {
        "names": names,
        "metric": metric,
        "legend": legend,
        "best_word": "lowest" if lower else "highest",
        "threshold": threshold,
        "threshold_rule": rule,
        "config_diff": differing_keys([row["run"].config for row in legend]),
        "chart": chart_payload(metric, lines, threshold=threshold) if metric else None,
        # escaped by campaigns/charts/curves.py
        "svg": mark_safe(overlay_svg(metric, lines)) if metric else "",
    }


def _chosen_metric(names: Sequence[tuple[str, int]], requested: str | None) -> str:
    """The requested metric, else the one most runs log ("" when none logs any); 404 when the
    campaign has metrics and the requested one is not among them."""
    metric = requested or (names[0][0] if names else "")
    if names and metric not in {n for n, _ in names}:
        raise Http404("No such metric in this campaign.")
    return metric


def _overlaid(
    runs: Iterable[Run], by_run: Mapping[int, run_metrics.Series], lower: bool
) -> tuple[list[dict[str, Any]], list[Overlaid]]:
    """The legend's rows and the chart's lines of the runs that logged the metric; colours are
    handed out in order over those runs only, so no colour is spent on a run not drawn."""
    legend: list[dict[str, Any]] = []
    lines: list[Overlaid] = []
    for run in runs:
        shown = by_run.get(run.pk)
        if shown is None:
            continue
        colour = PALETTE[len(lines) % len(PALETTE)]
        dashed = run.kind == "pilot"
        lines.append(Overlaid(run.display_name, colour, dashed, shown.points))
        legend.append(_legend_row(run, colour, dashed, shown, lower))
    return legend, lines


def _legend_row(
    run: Run, colour: str, dashed: bool, shown: run_metrics.Series, lower: bool
) -> dict[str, Any]:
    values = [v for _, v in shown.points]
    last = values[-1] if values else None
    best = best_value(values, lower_is_better=lower)
    return {
        "run": run,
        "item": run.variant.name if run.variant else "—",
        "colour": colour,
        "dashed": dashed,
        "count": shown.count,
        "last": format_value(last),
        "best": format_value(best),
        "url": reverse("admin:campaigns_run_change", args=[run.pk]),
    }


def format_value(value: float | None) -> str:
    """A metric value as the charts print it: 5 significant digits, a non-finite as its token."""
    if value is None:
        return "—"
    return token(value) or f"{value:.5g}"


def close_from_form(form: CloseCampaignForm, campaign: Campaign, user: Any) -> bool:
    """Close the campaign with the form's conclusion; a refusal goes onto the form."""
    try:
        close_campaign(
            campaign=campaign,
            acting_user=user,
            conclusion=form.cleaned_data["conclusion"],
            stop_running=form.cleaned_data["stop_running"],
        )
    except ValidationError as exc:
        refusal_to_form(form, exc)
    except RunsStillRunning as exc:
        form.add_error("stop_running", f"{exc}.")
    except PlanFrozen as exc:
        form.add_error(None, f"{exc}.")
    else:
        return True
    return False


def error_links(adminform: Any, inline_formsets: Any) -> list[dict[str, str]]:
    """Every error on the page as a link to its field (``#id_<field>``), for the summary at
    the top: the first screen then says what is wrong and where."""
    links: list[dict[str, str]] = []
    if adminform is not None:
        links += _form_error_links(adminform.form, "")
    for inline in inline_formsets:
        formset = inline.formset
        title = str(inline.opts.verbose_name_plural).capitalize()
        for error in formset.non_form_errors():
            links.append({"href": f"#{formset.prefix}-group", "label": title, "message": error})
        for i, form in enumerate(formset.forms):
            if form.errors:
                links += _form_error_links(form, f"{title} row {i + 1}: ")
    return links


def _form_error_links(form: Any, label_prefix: str) -> list[dict[str, str]]:
    links = []
    for name, errors in form.errors.items():
        if name == "__all__" or name not in form.fields:
            anchor = f"#{form.prefix}" if form.prefix else "#content"
            label = label_prefix.rstrip(": ") or "Form"
        else:
            anchor = f"#{form[name].auto_id}"
            label = f"{label_prefix}{form.fields[name].label or name}"
        for error in errors:
            links.append({"href": anchor, "label": label, "message": str(error)})
    return links


def ingest_key_banner(campaign: Campaign, raw: str, request: HttpRequest) -> str:
    """The once-shown key with what a training loop needs beside it: the campaign id, its items
    with their ids, and copy-paste snippets (the shipped client, curl) with those ids filled in."""
    items = list(campaign.items.exclude(status="cut").order_by("id").values_list("id", "name"))
    item_id = items[0][0] if items else 0
    base = request.build_absolute_uri("/").rstrip("/")
    # A run id names one configuration for good: each banner offers a fresh one.
    run_id = f"first-run-{secrets.token_hex(3)}"
    client = (
        f"export CAMPAIGN_DESK_URL={base} CAMPAIGN_DESK_KEY={raw}\n"
        "python3 - <<'PY'\n"
        "from campaign_desk_client import CampaignDesk\n"
        f'with CampaignDesk().run(campaign={campaign.pk}, run_id="{run_id}", '
        f'variant={item_id}, kind="pilot", config={{}}) as run:\n'
        "    run.log(1, loss=2.5)\n"
        "PY"
    )
    curl = (
        f'curl -sS -X POST "{base}/api/v1/campaigns/{campaign.pk}/runs/" '
        f'-H "Authorization: Bearer {raw}" -H "Content-Type: application/json" '
        f'-d \'{{"run_id": "{run_id}", "variant": {item_id}, "kind": "pilot", "config": {{}}}}\''
    )
    context = {
        "campaign": campaign,
        "raw": raw,
        "items": [{"id": i, "name": n} for i, n in items],
        "client": client,
        "curl": curl,
    }
    html = render_to_string("admin/campaigns/campaign/ingest_key_banner.html", context)
    return mark_safe(html.strip())  # escaped by the template


def issued_keys_page(
    model_admin: Any, request: HttpRequest, issued: list[tuple[Campaign, str]]
) -> HttpResponse:
    """The one page that shows newly issued ingest keys (docs/domain.md §26): the keys are in
    this response's body only, never in a message cookie, the session or the database, and the
    page is not cached (`no-store`)."""
    banners = [
        {
            "campaign": campaign,
            "html": ingest_key_banner(campaign, raw, request),
            "change_url": reverse("admin:campaigns_campaign_change", args=[campaign.pk]),
        }
        for campaign, raw in issued
    ]
    context = {
        **model_admin.admin_site.each_context(request),
        "title": "Ingest key issued: shown once",
        "banners": banners,
        "opts": model_admin.model._meta,
    }
    response = TemplateResponse(request, "admin/campaigns/campaign/ingest_key_issued.html", context)
    response["Cache-Control"] = "no-store"
    return response
