"""The campaign's timeline and forecast, as every surface reads them (docs/domain.md §7.7): the
campaign page's headline, Gantt and warnings, the commit confirmation, the timeline API, the
hardware options, the closing report, the calibration and the clone all call
`campaign_forecast`, which reads the plan, the baseline, the runs, the pilots and the lots
(`forecast_inputs`, a fixed number of queries) and computes with the pure rule. Writes nothing.
"""

from __future__ import annotations

from typing import Any

from campaigns.models import Campaign
from estimates.domain import forecast
from estimates.domain.forecast_inputs import Forecast
from estimates.domain.timeline_json import timeline_json
from estimates.selectors.forecast_inputs import forecast_inputs


def campaign_forecast(campaign: Campaign) -> Forecast:
    """The campaign's forecast as its data stands now: its timeline, items, lots and words."""
    return forecast.compute(forecast_inputs(campaign))


def campaign_timeline_json(campaign: Campaign, found: Forecast | None = None) -> dict[str, Any]:
    """The timeline answer (`GET /campaigns/{id}/timeline/`); `found` when already computed."""
    found = found if found is not None else campaign_forecast(campaign)
    return {
        "campaign": campaign.pk,
        **timeline_json(
            found,
            gpus={i.id: i.gpu for i in found.items},
            committed_at=campaign.committed_at,
        ),
    }
