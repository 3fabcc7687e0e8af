"""Campaign forecasts: reserved vs forecast vs observed hours, persisted as `Estimate` rows.

The flow (docs/domain.md §7-§10), one concept per module:

1. A plan change or a pilot throughput calls `estimates.services.mark_stale(campaign_id)`
   (from `estimates.events`, on the event the campaigns service emits): it bumps the campaign
   estimate's `input_version`, marks every estimate of the campaign stale and, once the
   transaction commits, enqueues `estimates.tasks.recompute_forecast`.
2. The task calls `recompute(campaign_id, version)` (`estimates.services.forecast`):
   `compute_forecast(campaign)` reads the plan into frozen inputs
   (`estimates.selectors.forecast_inputs`) and computes with the pure rule
   (`estimates.domain.forecast`, its words in `estimates.domain.forecast_advice`);
   `land_forecast()` writes the result in one transaction, and only if `version` is still the
   current input version and has not landed yet. A superseded or duplicate delivery is a no-op.
3. `stale_estimates()` lists estimates stale for too long; the periodic sweep re-enqueues them, so
   a lost message or a killed worker never leaves a forecast stale for good.

This module is the public face the tasks, the API and the admin panel use; it also renders the
admin panel from the persisted forecast.
"""

from __future__ import annotations

from typing import Any

from django.template.loader import render_to_string
from django.utils.safestring import SafeString

from campaigns.domain.formatting import format_hours
from campaigns.models import Campaign, PlannedItem, ThroughputSample
from estimates.domain.forecast_advice import pilot_hours
from estimates.domain.forecast_inputs import (
    ASSUMED,
    CALIBRATED,
    OBSERVED,
    PILOT,
    Forecast,
    ItemForecast,
)
from estimates.models import Estimate
from estimates.selectors.forecast_inputs import compute_forecast, item_input, pilot_input
from estimates.services.forecast import (
    bump as _bump,
)
from estimates.services.forecast import (
    campaign_row as _campaign_row,
)
from estimates.services.forecast import (
    ensure_forecast,
    land_failure,
    land_forecast,
    recompute,
    stale_estimates,
)

__all__ = [
    "ASSUMED",
    "CALIBRATED",
    "OBSERVED",
    "PILOT",
    "Forecast",
    "ItemForecast",
    "_bump",
    "_campaign_row",
    "compute_forecast",
    "ensure_forecast",
    "forecast_panel_html",
    "land_failure",
    "land_forecast",
    "panel_context",
    "recompute",
    "stale_estimates",
]


def _pilot_hours(item: PlannedItem, sample: ThroughputSample) -> tuple[float | None, str]:
    """The pure `pilot_hours` on model rows (an unsaved sample will do)."""
    return pilot_hours(item_input(item), pilot_input(sample))


def panel_context(estimate: Estimate) -> dict[str, Any]:
    outputs = estimate.outputs if isinstance(estimate.outputs, dict) else {}
    return {
        "estimate": estimate,
        "forecast": outputs,
        "items": outputs.get("items", []),
        "totals": outputs.get("totals", {}),
        "advice": outputs.get("advice", []),
        "lots": outputs.get("lots", {}),
        "calibration": outputs.get("calibration", []),
        # Written as the plan figures' line writes hours (campaigns/domain/formatting.py).
        "figures": {
            k: format_hours(v)
            for k, v in (outputs.get("figures") or {}).items()
            if isinstance(v, int | float)
        },
    }


def forecast_panel_html(campaign: Campaign) -> SafeString:
    """The forecast panel of the campaign's admin page (templates/estimates/forecast_panel.html).

    Serves the persisted forecast, computing it once if none exists yet.
    """
    estimate = ensure_forecast(campaign=campaign)
    return render_to_string("estimates/forecast_panel.html", panel_context(estimate))
