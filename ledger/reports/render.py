"""The closing report rendered: HTML (with its inline SVG charts), Markdown and JSON, from the
plain JSON that `ledger.reports.collect` gathers. Chart geometry is ledger/charts/ and
campaigns/charts/gantt.py; this module only turns the report's rows into their inputs."""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

from django.template.loader import render_to_string
from django.utils.safestring import mark_safe

from campaigns.charts.gantt import GanttStage, gantt_svg
from campaigns.domain.timeline_lots import LotPlan, lay_out_lots
from ledger.charts import report_charts as charts
from ledger.charts.spend_chart import spend_chart_html
from ledger.selectors.quality_per_dollar import value_chart_html
from ledger.templatetags.ledger_report import as_markdown_text

FORMATS = ("html", "markdown", "json")


def render(data: dict[str, Any], fmt: str) -> str:
    if fmt == "html":
        return render_html(data)
    if fmt == "markdown":
        return render_markdown(data)
    if fmt == "json":
        return render_json(data)
    raise ValueError(f"unknown format {fmt!r}; expected one of {', '.join(FORMATS)}")


def render_json(data: dict[str, Any]) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def render_markdown(data: dict[str, Any]) -> str:
    # Autoescaped: every string of the data shows inert (ledger/templatetags/ledger_report.py).
    return render_to_string("ledger/closing_report.md", {"r": as_markdown_text(data)})


def render_html(data: dict[str, Any]) -> str:
    return render_to_string(
        "ledger/closing_report.html",
        {
            "r": data,
            "timeline": timeline_of(data),
            "costs": costs_of(data),
            # Reports stored before the spend section have none: no chart, not a failure.
            "spend_chart": spend_chart_html(data["spend"]) if data.get("spend") else "",
            "value_chart": (
                value_chart_html(data["value_for_money"]) if data.get("value_for_money") else ""
            ),
            "gantt": mark_safe(gantt_of(data)),  # escaped by campaigns/charts/gantt.py
        },
    )


# --- Formatting helpers ---------------------------------------------------------------------


def timeline_of(data: dict[str, Any]) -> charts.Chart:
    rows = [
        charts.TimelineRow(
            label=r["name"],
            planned_start=float(r["planned_start"]),
            planned_end=float(r["planned_end"]),
            observed_start=float(r["observed_start"]) if r["observed_start"] else None,
            observed_end=float(r["observed_end"]) if r["observed_end"] else None,
            deviates=r["needs_note"],
            machine=r["machine"],
        )
        for r in sorted(
            (r for r in data["hours"]["stages"] if r.get("planned_start") is not None),
            key=lambda r: (Decimal(r["planned_start"]), r["id"]),
        )
    ]
    return charts.timeline_chart(rows, float(data["hours"]["totals"]["window_hours"]))


def gantt_of(data: dict[str, Any]) -> str:
    """The frozen plan's calendar drawn as on the campaign page (campaigns/charts/gantt.py):
    cut items' stages marked cut, observed hours overlaid."""
    cut = {
        i["name"]
        for tier in data.get("items", {}).get("tiers", [])
        for i in tier["items"]
        if i.get("fate") == "cut"
    }
    stages = [
        GanttStage(
            key=r["name"],
            resource=(r["resource"] or "gpu") if r["machine"] else None,
            start_hours=float(r["planned_start"]),
            end_hours=float(r["planned_end"]),
            critical=bool(r.get("critical")),
            state="cut" if r.get("variant") in cut else "planned",
            planned_start=float(r["planned_start"]),
            planned_end=float(r["planned_end"]),
        )
        for r in data["hours"]["stages"]
        if r.get("planned_start") is not None
    ]
    if not stages:
        return ""
    lots = lay_out_lots(
        [
            LotPlan(label=lot["plan"], hours=float(lot["duration_hours"]), quantity=lot["quantity"])
            for lot in data["plan"].get("lots", [])
            if lot.get("duration_hours")
        ]
    )
    return gantt_svg(stages, float(data["hours"]["totals"]["window_hours"]), lots)


def costs_of(data: dict[str, Any]) -> charts.Chart:
    # Sums only: the cost per accepted deliverable is a ratio, not a sum, and is shown as a
    # figure beside the chart rather than as a bar among them.
    costs = data["costs"]
    rows = [
        charts.CostRow("Rental (committed lots)", Decimal(costs["rental"]), charts.RENTAL),
        charts.CostRow("Included expenses", Decimal(costs["included"]), charts.INCLUDED),
        charts.CostRow("Incurred (rental + included)", Decimal(costs["incurred"]), charts.INCURRED),
        charts.CostRow("External (listed apart)", Decimal(costs["external"]), charts.EXTERNAL),
    ]
    return charts.cost_chart(rows, costs["currency"])
