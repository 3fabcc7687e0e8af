"""``{% load estimates_timeline %}``: the campaign's timeline on the campaign's pages
(docs/domain.md §7.7, §7.8): ``{% timeline_summary campaign %}`` (the headline, the named figures,
the Gantt of the committed plan beside the calendar as observed and forecast, the stages as a
table and the plan's warnings) and ``{% plan_warnings_list campaign %}`` (the commit
confirmation's warnings: the same list).

Template tags, so the campaigns app's pages show the timeline without importing the layers above
it. Both read `estimates.selectors.timeline.campaign_forecast` once per page (kept on the
campaign object for the rest of the page's rendering).
"""

from __future__ import annotations

from typing import Any

from django import template
from django.utils.safestring import mark_safe

from campaigns.charts.gantt import gantt_of
from campaigns.domain.formatting import format_hours
from campaigns.models import Campaign
from estimates.domain.forecast_inputs import Forecast
from estimates.selectors.timeline import campaign_forecast

register = template.Library()

_MEMO = "_campaign_forecast"


def forecast_of(campaign: Campaign) -> Forecast:
    """The campaign's forecast, computed once per page, from the campaign as stored: a change
    form shown again with its errors holds the refused values (a negative window) on its
    object, and the page tells what is saved."""
    found = campaign.__dict__.get(_MEMO)
    if found is None:
        found = campaign_forecast(Campaign.objects.get(pk=campaign.pk))
        campaign.__dict__[_MEMO] = found
    return found


def _rows(found: Forecast) -> list[dict[str, Any]]:
    return [
        {
            "name": s.key,
            "resource": s.resource if s.machine else "",
            "state": s.state,
            "planned": (
                "—"
                if s.planned_start is None
                else f"{format_hours(s.planned_start)}–{format_hours(s.planned_end or 0)}"
            ),
            "observed": "—" if s.observed.hours is None else format_hours(s.observed.hours),
            "start": format_hours(s.start),
            "end": format_hours(s.end),
            "critical": s.critical,
        }
        for s in sorted(found.timeline.stages, key=lambda s: (s.start, s.key))
    ]


@register.inclusion_tag("estimates/timeline_summary.html")
def timeline_summary(campaign: Campaign) -> dict[str, Any]:
    """The campaign page's summary of its calendar."""
    found = forecast_of(campaign)
    return {
        "headline": found.headline,
        "figures": found.timeline.figures,
        "gantt": mark_safe(gantt_of(found.timeline)),  # escaped by campaigns/charts/gantt.py
        "rows": _rows(found),
        "warnings": found.warnings,
    }


@register.inclusion_tag("estimates/plan_warnings.html")
def plan_warnings_list(campaign: Campaign) -> dict[str, Any]:
    """The plan's warnings as the commit confirmation lists them."""
    found = forecast_of(campaign)
    return {"headline": found.headline, "warnings": found.warnings}
