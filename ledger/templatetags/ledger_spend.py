"""The spend burn-down the ledger adds to the campaign page and the closing report
(docs/domain.md §18): `{% load ledger_spend %}{% spend_chart campaign %}`. The campaign page
belongs to the campaigns app, which imports nothing from the ledger, so its template loads this.
"""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from typing import Any

from django import template
from django.template.loader import render_to_string
from django.utils.dateparse import parse_datetime
from django.utils.safestring import SafeString, mark_safe

from campaigns.models import Campaign

from .. import burn
from ..models import Alert
from ..spend import spend_over_time

register = template.Library()


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


@register.simple_tag
def spend_chart(campaign: Campaign) -> SafeString:
    """Draw the campaign's spend over time (nothing while it is a draft: nothing is spent)."""
    if campaign.pk is None or campaign.committed_at is None:
        return mark_safe("")
    return spend_chart_html(spend_over_time(campaign))


@register.simple_tag
def money_panel(campaign: Campaign) -> SafeString:
    """The campaign page's money panel: its open alerts (docs/domain.md §19), then the spend
    burn-down (§18.4). Nothing while the campaign is a draft."""
    if campaign.pk is None or campaign.committed_at is None:
        return mark_safe("")
    open_alerts = list(
        Alert.objects.filter(campaign=campaign, resolved_at=None).order_by("-raised_at")[:20]
    )
    return mark_safe(
        render_to_string(
            "ledger/_money_panel.html",
            {"alerts": open_alerts, "chart": spend_chart_html(spend_over_time(campaign))},
        )
    )
