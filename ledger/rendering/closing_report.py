"""The closing report rendered: HTML (with its inline SVG charts), Markdown and JSON, from the
plain JSON that `ledger.selectors.closing_report` gathers. Chart geometry is ledger/charts/ and
campaigns/charts/gantt.py; this module only turns the report's rows into their inputs."""

from __future__ import annotations

import json
from dataclasses import fields
from decimal import Decimal
from typing import Any

from django.template.loader import render_to_string
from django.utils.safestring import mark_safe

from campaigns.charts.gantt import GanttStage, gantt_svg
from campaigns.domain.timeline_lots import LotSpan
from ledger.charts import report_charts as charts
from ledger.rendering.markdown_text import as_markdown_text
from ledger.rendering.spend_chart import spend_chart_html
from ledger.rendering.value_chart import value_chart_html

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
    # Autoescaped: every string of the data shows inert (ledger/rendering/markdown_text.py).
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
    """Each stage where the committed calendar put it, and, once it happened (observed, running
    or cut after it ran), where the calendar as it ran put it: a slip moves the later bars."""
    rows = [
        charts.TimelineRow(
            label=r["name"],
            planned_start=float(r["planned_start"]),
            planned_end=float(r["planned_end"]),
            observed_start=float(r["start"]) if _happened(r) else None,
            observed_end=float(r["end"]) if _happened(r) else None,
            deviates=r["needs_note"],
            machine=r["machine"],
        )
        for r in sorted(
            (r for r in data["hours"]["stages"] if r.get("planned_start") is not None),
            key=lambda r: (Decimal(r["planned_start"]), r["id"]),
        )
    ]
    return charts.timeline_chart(rows, float(data["hours"]["totals"]["window_hours"]))


def _happened(row: dict[str, Any]) -> bool:
    if row.get("start") is None:
        return False
    return row["observed_hours"] is not None or row.get("state") in ("running", "cut")


def gantt_of(data: dict[str, Any]) -> str:
    """The calendar drawn as on the campaign page (campaigns/charts/gantt.py), from the report's
    `gantt` section; a report stored before it has none: no chart."""
    section = data.get("gantt")
    if not section or not section.get("stages"):
        return ""
    known = {f.name for f in fields(GanttStage)}
    lot_fields = {f.name for f in fields(LotSpan)}
    return gantt_svg(
        [GanttStage(**{k: v for k, v in s.items() if k in known}) for s in section["stages"]],
        float(section["window_hours"]),
        [
            LotSpan(**{k: v for k, v in lot.items() if k in lot_fields})
            for lot in section.get("lots", [])
            if lot_fields <= set(lot)
        ],
    )


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
