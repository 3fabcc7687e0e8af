"""The campaign's timeline as JSON (docs/domain.md §7.7; docs/api.md "timeline"): the one
answer of `GET /campaigns/{id}/timeline/`, and the `timeline` section of the closing report's
JSON. It formats what the timeline and the forecast computed; it computes nothing.

Hours are decimal strings to the hundredth (half-up); moments ISO 8601 in UTC, given when the
plan was committed (the timeline's hour 0 is the commit). Pure: no Django, no I/O.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from campaigns.domain.observed_hours import FROM_RUNS, StageObserved
from campaigns.domain.timeline import StageLine, Timeline
from estimates.domain.forecast_inputs import Forecast

CENT = Decimal("0.01")


def hours(value: float | Decimal | None) -> str | None:
    """Hours as a decimal string: `78` -> `"78.00"`, never `"-0.00"`."""
    if value is None:
        return None
    rounded = Decimal(str(value)).quantize(CENT, rounding=ROUND_HALF_UP)
    return str(rounded if rounded != 0 else Decimal("0.00"))


def _moment(origin: datetime | None, at: float) -> str | None:
    if origin is None:
        return None
    return (origin + timedelta(hours=at)).isoformat().replace("+00:00", "Z")


def observed_source(seen: StageObserved) -> str | None:
    """`typed` when a person's figure stands, `runs` when the runs' does; None: nothing yet."""
    if seen.hours is None:
        return None
    return "runs" if seen.source == FROM_RUNS else "typed"


def stage_json(line: StageLine, gpu: str) -> dict[str, Any]:
    seen = line.observed
    return {
        "id": line.id,
        "name": line.key,
        "kind": line.kind,
        "item": line.item,
        "item_id": line.variant_id,
        "gpu": gpu,
        "machine": line.machine,
        "resource": line.resource,
        "state": line.state,
        "planned_hours": hours(line.planned_hours),
        "planned_start": hours(line.planned_start),
        "planned_end": hours(line.planned_end),
        "observed_hours": hours(seen.hours),
        "observed_source": observed_source(seen),
        "runs_observed_hours": hours(seen.runs_hours),
        "observed_reason": seen.reason if seen.typed_hours is not None else "",
        "running_runs": seen.running,
        "forecast_hours": hours(line.hours),
        "forecast_start": hours(line.start),
        "forecast_end": hours(line.end),
        "basis": line.basis,
        "critical": line.critical,
    }


def _lots(line: Timeline, origin: datetime | None) -> list[dict[str, Any]]:
    covers = line.machine_end <= line.lots_end + 1e-9
    return [
        {
            "label": lot.label,
            "gpu": lot.gpu,
            "start_hours": hours(lot.start),
            "end_hours": hours(lot.end),
            "starts_at": _moment(origin, lot.start),
            "ends_at": _moment(origin, lot.end),
            "covers": covers,
        }
        for lot in line.lots
    ]


def _to_buy(forecast: Forecast) -> dict[str, Any]:
    lots = forecast.lots
    return {
        "hours": hours(forecast.timeline.hours_to_buy),
        "currency": lots.get("currency"),
        "advised": lots.get("advised", []),
        "advised_total": lots.get("advised_total"),
        "cut_options": lots.get("cut_options", []),
        "explanation": lots.get("explanation", []),
    }


def timeline_json(
    forecast: Forecast, *, gpus: dict[int, str], committed_at: datetime | None
) -> dict[str, Any]:
    """The timeline answer; `gpus`: each item's GPU by id; `committed_at`: hour 0's moment."""
    line = forecast.timeline
    key_ids = {s.key: s.id for s in line.stages}
    return {
        "window_hours": hours(line.window_hours),
        "committed": forecast.committed,
        "headline": forecast.headline,
        "planned_hours": hours(line.planned_hours),
        "observed_hours": hours(line.observed_hours),
        "forecast_hours": hours(line.hours),
        "slack_hours": hours(line.slack_hours),
        "over_hours": hours(line.over_hours),
        "fits_in_window": line.fits,
        "machine_hours": hours(line.machine_hours),
        "machine_end_hours": hours(line.machine_end),
        "critical_path": [key_ids[k] for k in line.critical_path],
        "lots": _lots(line, committed_at),
        "lots_end_hours": hours(line.lots_end) if line.lots else None,
        "to_buy": _to_buy(forecast),
        "stages": [
            stage_json(s, gpus.get(s.variant_id, "") if s.variant_id else "") for s in line.stages
        ],
        "unattributed_runs": {
            "hours": hours(line.observed.unattributed_hours),
            "runs": line.observed.unattributed_runs,
        },
        "figures": line.figures.as_json(),
        "forecast_figures": {k: hours(v) for k, v in forecast.figures.items()},
        "warnings": [w.as_json() for w in forecast.warnings],
        "problem": line.problem,
    }
