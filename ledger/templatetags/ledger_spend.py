"""The spend burn-down the ledger adds to the campaign page and the closing report
(docs/domain.md §18): `{% load ledger_spend %}{% spend_chart campaign %}`. The campaign page
belongs to the campaigns app, which imports nothing from the ledger, so its template loads this.
"""

from __future__ import annotations

from typing import Any

from django import template
from django.template.loader import render_to_string
from django.utils.safestring import SafeString, mark_safe

from campaigns.models import Campaign
from ledger.models import Alert
from ledger.rendering.spend_chart import spend_chart_html
from ledger.rendering.value_chart import value_chart_html
from ledger.selectors.quality_per_dollar import value_for_money
from ledger.selectors.spend import spend_over_time

register = template.Library()


@register.simple_tag
def spend_chart(campaign: Campaign) -> SafeString:
    """Draw the campaign's spend over time (nothing while it is a draft: nothing is spent)."""
    if campaign.pk is None or campaign.committed_at is None:
        return mark_safe("")
    return spend_chart_html(spend_over_time(campaign))


@register.simple_tag
def money_panel(campaign: Campaign) -> SafeString:
    """The campaign page's money panel: what it inherited from the campaign it was planned from
    (docs/domain.md §21), its open alerts (§19), then the spend burn-down (§18.4) and quality per
    dollar (§18.6); alerts and charts only once committed (a draft has spent nothing)."""
    if campaign.pk is None:
        return mark_safe("")
    context: dict[str, Any] = {
        "campaign": campaign,
        "inherited": campaign.inherited_uncertainties or [],
    }
    if campaign.committed_at is not None:
        context["alerts"] = list(
            Alert.objects.filter(campaign=campaign, resolved_at=None).order_by("-raised_at")[:20]
        )
        context["chart"] = spend_chart_html(spend_over_time(campaign))
        # Quality per dollar (§18.6): each item's best metric against its cost so far.
        context["value_chart"] = value_chart_html(value_for_money(campaign))
    return mark_safe(render_to_string("ledger/_money_panel.html", context))
