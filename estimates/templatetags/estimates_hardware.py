"""``{% load estimates_hardware %}{% hardware_options_panel campaign %}``: the campaign page's
"which GPU and which plan" panel (templates/estimates/hardware_options_panel.html).

A template tag, so the campaigns app's templates can show it without campaigns importing the
estimates app (the layers go campaigns < estimates).
"""

from __future__ import annotations

from typing import Any

from django import template

from campaigns.models import Campaign
from estimates.selectors.hardware_options import campaign_hardware_options

register = template.Library()

TOP = 3


@register.inclusion_tag("estimates/hardware_options_panel.html")
def hardware_options_panel(campaign: Campaign, top: int = TOP) -> dict[str, Any]:
    """The ``top`` cheapest options that fit the campaign's remaining items, in plain words."""
    ranked, excluded = campaign_hardware_options(campaign)
    return {
        "campaign": campaign,
        "options": ranked[:top],
        "more": max(0, len(ranked) - top),
        "excluded": excluded,
    }
