"""Panels the estimates app adds to the campaign page (templates/admin/campaigns/campaign/).

The campaign page belongs to the campaigns app, which imports nothing from the layers above it;
the page's template loads these tags instead (docs/domain.md §17).
"""

from __future__ import annotations

from typing import Any

from django import template
from django.utils.safestring import SafeString

from campaigns.models import Campaign, Run
from estimates.forecasts import forecast_panel_html
from estimates.selectors.memory import campaign_memory, run_memory

register = template.Library()


@register.simple_tag
def forecast_panel(campaign: Campaign) -> SafeString:
    """Reserved vs forecast vs observed hours, fits-in-window and lot advice."""
    return forecast_panel_html(campaign)


@register.inclusion_tag("estimates/memory_panel.html")
def item_memory(campaign: Campaign) -> dict[str, Any]:
    """Per item: the estimator's GPU memory per device beside the measured peak."""
    return {"rows": campaign_memory(campaign) if campaign.pk else [], "scope": "item"}


@register.inclusion_tag("estimates/memory_panel.html")
def run_memory_panel(run: Run) -> dict[str, Any]:
    """The run's measured peak GPU memory beside its item's estimate."""
    found = run_memory(run)
    return {"rows": [found] if found is not None else [], "scope": "run"}
