"""What a campaign forecast is computed from, and what it yields (pure: no Django, no I/O;
docs/domain.md §8-§10, §20).

`estimates.selectors.forecast_inputs` reads the database into `ForecastInputs`;
`estimates.domain.forecast.compute` turns them into a `Forecast`. Units: hours are Decimal as
planned (the model's fields) and floats once computed; money is Decimal with its currency;
throughputs are per second. Statuses and kinds are the models' string values.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from campaigns.domain.timeline import Timeline, TimelineInputs
from catalog.domain.catalog import GpuModel
from estimates.domain import calibration
from estimates.domain import lot_selection as plans

PILOT = "pilot"
ASSUMED = "assumed"
OBSERVED = "observed"
# The team's median observed/estimated ratio applied to a planned figure (docs/domain.md §20).
CALIBRATED = "calibrated"

# The models' values (campaigns.models.ItemStatus, RunKind, RunStatus).
ITEM_CUT = "cut"
ITEM_DONE = "done"
RUN_PILOT = "pilot"
FINISHED_RUNS = frozenset({"completed", "stopped", "failed"})


def h(hours: float) -> float:
    """Hours as shown: two decimals, never -0.0."""
    return round(hours, 2) + 0.0


# --------------------------------------------------------------------------- the inputs


@dataclass(frozen=True)
class ItemInput:
    id: int
    name: str
    tier: str
    role: str
    status: str
    gpu: str
    planned_hours: Decimal
    prep_hours: Decimal
    # The config with the item's work fields over any key of the same name (docs/domain.md §10).
    config: Mapping[str, Any] = field(default_factory=dict)
    # The preview's model / training / hardware objects, when the item carries them (§24.9).
    estimate_spec: Mapping[str, Any] | None = None
    # The lesson a clone multiplied its planned hours by (§21): calibrated once already.
    calibrated_from: Mapping[str, Any] | None = None


@dataclass(frozen=True)
class PilotInput:
    """An item's most recent pilot measurement."""

    sample_id: int | None
    run_id: str
    tokens_per_second: float | None
    samples_per_second: float | None
    gpus: int | None
    measured_seconds: float | None = None
    measured_at: str | None = None

    def as_json(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "tokens_per_second": self.tokens_per_second,
            "samples_per_second": self.samples_per_second,
            "gpus": self.gpus,
            "measured_seconds": self.measured_seconds,
            "measured_at": self.measured_at,
        }


@dataclass(frozen=True)
class LotInput:
    """A reserved lot: a rental plan times a quantity (priced per lot)."""

    provider: str
    plan_name: str
    gpu: str
    quantity: int
    price: Decimal
    currency: str

    @property
    def total_price(self) -> Decimal:
        return self.price * self.quantity


@dataclass(frozen=True)
class ForecastInputs:
    campaign_id: int
    currency: str
    budget: Decimal | None
    items: tuple[ItemInput, ...]
    # The plan, the baseline, the runs and the lots as the timeline reads them (§7.7).
    timeline: TimelineInputs
    pilots: Mapping[int, PilotInput] = field(default_factory=dict)
    baseline_digest: str | None = None
    lots: tuple[LotInput, ...] = ()
    # Rental plans listed in the campaign's currency (no exchange rate is ever invented).
    offers: tuple[plans.RentalPlanOffer, ...] = ()
    # The catalogue's GPUs by normalized name.
    gpus: Mapping[str, GpuModel] = field(default_factory=dict)
    known_gpus: tuple[str, ...] = ()
    # The team's other campaigns' calibration (docs/domain.md §20).
    calibrations: tuple[calibration.Calibration, ...] = ()
    # The stages whose planned hours a clone calibrated already (§21), by stage id.
    calibrated_stages: frozenset[int] = frozenset()

    @property
    def window_hours(self) -> float:
        return float(self.timeline.window_hours)

    @property
    def committed(self) -> bool:
        """A baseline froze the plan: reserved hours are the baseline's (§3)."""
        return self.timeline.committed_stages is not None


# --------------------------------------------------------------------------- the result


@dataclass(frozen=True)
class ItemForecast:
    id: int
    name: str
    tier: str
    role: str
    status: str
    gpu: str
    planned_hours: float
    # None: the item is not in the frozen baseline (added after commit).
    reserved_hours: float | None
    forecast_hours: float
    observed_hours: float | None
    time_source: str
    note: str
    pilot: dict[str, Any] | None = None
    calculator: dict[str, Any] | None = None
    # What the item's estimate row records as its inputs (not shown in the forecast).
    config: dict[str, Any] = field(default_factory=dict)

    def as_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "name": self.name,
            "tier": self.tier,
            "role": self.role,
            "status": self.status,
            "gpu": self.gpu,
            "planned_hours": h(self.planned_hours),
            "reserved_hours": None if self.reserved_hours is None else h(self.reserved_hours),
            "forecast_hours": h(self.forecast_hours),
            "observed_hours": None if self.observed_hours is None else h(self.observed_hours),
            "time_source": self.time_source,
            "note": self.note,
            "pilot": self.pilot,
            "calculator": self.calculator,
        }


@dataclass(frozen=True)
class PlanWarning:
    """One of a plan's warnings (estimates/domain/plan_warnings.py, docs/domain.md §7.8)."""

    code: str
    message: str
    item: int | None = None
    stage: int | None = None

    def as_json(self) -> dict[str, Any]:
        return {"code": self.code, "message": self.message, "item": self.item, "stage": self.stage}


@dataclass(frozen=True)
class Forecast:
    """The campaign's forecast: its timeline (every hour figure of the calendar, §7.7), each
    item's forecast, the lot advice, and the words every surface shows."""

    timeline: Timeline
    items: tuple[ItemForecast, ...]
    time_source: str
    advice: tuple[str, ...]
    lots: dict[str, Any]
    headline: str = ""
    inputs: dict[str, Any] = field(default_factory=dict)
    # Items whose planned hours were calibrated: raw and calibrated figures, and the sources.
    calibration: tuple[dict[str, Any], ...] = ()
    # The plan figures' names with the forecast hours (docs/domain.md §8.5): work_hours,
    # gpu_hours, calendar_hours, and machine_hours (what the lots must hold).
    figures: dict[str, float] = field(default_factory=dict)
    committed: bool = False
    warnings: tuple[PlanWarning, ...] = ()

    @property
    def window_hours(self) -> float:
        return self.timeline.window_hours

    @property
    def reserved_hours(self) -> float:
        return self.timeline.planned_hours

    @property
    def forecast_hours(self) -> float:
        return self.timeline.hours

    @property
    def observed_hours(self) -> float:
        return float(self.timeline.observed.total)

    @property
    def critical_path(self) -> tuple[str, ...]:
        return self.timeline.critical_path

    @property
    def fits_in_window(self) -> bool:
        return self.timeline.fits

    def as_json(self) -> dict[str, Any]:
        sources = Counter(i.time_source for i in self.items if i.status != ITEM_CUT)
        return {
            "window_hours": h(self.window_hours),
            "committed": self.committed,
            "reserved_basis": "baseline" if self.committed else "plan",
            "totals": {
                "reserved_hours": h(self.reserved_hours),
                "forecast_hours": h(self.forecast_hours),
                "observed_hours": h(self.observed_hours),
            },
            "fits_in_window": self.fits_in_window,
            "uncommitted_hours": h(self.timeline.slack_hours),
            "over_hours": h(self.timeline.over_hours),
            "time_source": self.time_source,
            "time_sources": {k: sources.get(k, 0) for k in (PILOT, ASSUMED, OBSERVED, CALIBRATED)},
            "critical_path": list(self.critical_path),
            "headline": self.headline,
            "items": [i.as_json() for i in self.items],
            "lots": self.lots,
            "advice": list(self.advice),
            "calibration": list(self.calibration),
            "figures": dict(self.figures),
            "warnings": [w.as_json() for w in self.warnings],
        }
