"""``{% load estimates_hardware %}{% hardware_options_panel campaign %}``: the campaign page's
"which GPU and which plan" panel (templates/estimates/hardware_options_panel.html).

A template tag, so the campaigns app's templates can show it without campaigns importing the
estimates app (the layers go campaigns < estimates).
"""

from __future__ import annotations

from typing import Any

from django import template

from campaigns.domain.formatting import format_hours
from campaigns.models import Campaign
from estimates.selectors.hardware_options import campaign_hardware_options, campaign_works

register = template.Library()

TOP = 3


@register.inclusion_tag("estimates/hardware_options_panel.html")
def hardware_options_panel(campaign: Campaign, top: int = TOP) -> dict[str, Any]:
    """The ``top`` cheapest options that fit the campaign's remaining items, in plain words."""
    # As stored: a change form shown again with its errors holds the refused values.
    campaign = Campaign.objects.get(pk=campaign.pk)
    found = campaign_works(campaign)
    works = found.works
    ranked, excluded = campaign_hardware_options(campaign, works=found)
    return {
        "campaign": campaign,
        # The hours ranked, named as the plan figures name them (docs/domain.md §8.5): the
        # forecast work hours and GPU-hours of the items not done or cut.
        "left_work_hours": format_hours(sum(w.wall_hours for w in works)),
        "left_gpu_hours": format_hours(sum(w.wall_hours * w.gpus for w in works)),
        "options": [
            {
                "option": o,
                "gpu_hours": format_hours(o.gpu_hours),
                "work_hours": format_hours(o.wall_hours),
                "other_hours": format_hours(o.other_machine_hours) if o.other_machine_hours else "",
                "calendar_hours": (
                    format_hours(o.calendar_hours) if o.calendar_hours is not None else ""
                ),
            }
            for o in ranked[:top]
        ],
        "more": max(0, len(ranked) - top),
        "excluded": excluded,
    }
