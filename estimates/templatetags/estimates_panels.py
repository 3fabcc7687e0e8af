"""Panels the estimates app adds to the campaign page (templates/admin/campaigns/campaign/).

The campaign page belongs to the campaigns app, which imports nothing from the layers above it;
the page's template loads these tags instead (docs/domain.md §17).
"""

from __future__ import annotations

from django import template
from django.utils.safestring import SafeString

from campaigns.models import Campaign
from estimates.forecasts import forecast_panel_html

register = template.Library()


@register.simple_tag
def forecast_panel(campaign: Campaign) -> SafeString:
    """Reserved vs forecast vs observed hours, fits-in-window and lot advice."""
    return forecast_panel_html(campaign)
