"""The SVG burn-down of a `ledger.selectors.spend.spend_over_time` answer (docs/domain.md §18.4):
drawn on the campaign page (templatetags/ledger_spend.py) and in the closing report
(ledger/rendering/closing_report.py)."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from typing import Any

from django.template.loader import render_to_string
from django.utils.dateparse import parse_datetime
from django.utils.safestring import SafeString, mark_safe

from ledger.domain import spend as burn


def spend_chart_html(spend: dict[str, Any]) -> SafeString:
    """The SVG burn-down of a `spend_over_time` answer: cumulative spend, projection, budget."""
    series: list[tuple[datetime, Decimal]] = []
    for point in spend["series"]:
        at = parse_datetime(point["at"])
        if at is not None:
            series.append((at, Decimal(point["cumulative"])))
    raw = spend.get("projection")
    projection = None
    if raw:
        at = parse_datetime(raw["at"])
        if at is not None:
            projection = burn.Projection(
                at,
                Decimal(raw["amount"]),
                Decimal(raw["low"]),
                Decimal(raw["high"]),
                raw["uncertainty"],
            )
    budget = Decimal(spend["budget"]) if spend.get("budget") is not None else None
    chart = burn.burn_chart(series, budget, projection, spend["currency"])
    return mark_safe(
        render_to_string(
            "ledger/_spend_chart.svg.html",
            {"chart": chart, "projection": raw, "currency": spend["currency"]},
        )
    )
