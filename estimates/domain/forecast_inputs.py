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

from campaigns.domain import calendar
from campaigns.domain.observed_hours import RunRow
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


@dataclass(frozen=True)
class StageInput:
    id: int
    # The calendar key: the name, with #id where names repeat.
    key: str
    name: str
    kind: str
    machine: bool
    resource: str
    planned_hours: Decimal
    # What the planner typed; the stage's figure is reconciled with its runs (§8.6).
    observed_hours: Decimal | None
    variant_id: int | None
    depends_on: tuple[int, ...] = ()
    observed_reason: str = ""


# A run as the stages' reconciliation reads it (docs/domain.md §8.6): one shape for both.
RunInput = RunRow


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
class BaselineItem:
    id: int
    planned_hours: float
    prep_hours: float
    status: str


@dataclass(frozen=True)
class Baseline:
    """The frozen plan of a committed campaign (docs/domain.md §3): never rewritten."""

    digest: str | None
    items: tuple[BaselineItem, ...] = ()
    stages: tuple[calendar.Stage, ...] = ()


@dataclass(frozen=True)
class ForecastInputs:
    campaign_id: int
    window_hours: float
    currency: str
    budget: Decimal | None
    items: tuple[ItemInput, ...]
    stages: tuple[StageInput, ...] = ()
    runs: tuple[RunInput, ...] = ()
    pilots: Mapping[int, PilotInput] = field(default_factory=dict)
    # None: the campaign is a draft (or has no baseline), so the plan is the reservation.
    baseline: Baseline | None = None
    lots: tuple[LotInput, ...] = ()
    # Rental plans listed in the campaign's currency (no exchange rate is ever invented).
    offers: tuple[plans.RentalPlanOffer, ...] = ()
    # The catalogue's GPUs by normalized name.
    gpus: Mapping[str, GpuModel] = field(default_factory=dict)
    known_gpus: tuple[str, ...] = ()
    # The team's other campaigns' calibration (docs/domain.md §20).
    calibrations: tuple[calibration.Calibration, ...] = ()


def baseline_stages(rows: list[dict[str, Any]]) -> tuple[calendar.Stage, ...]:
    """The frozen baseline's stages as calendar stages (keys as `stage_keys` makes them)."""
    names = Counter(r["name"] for r in rows)
    keys = {
        r["id"]: r["name"] if names[r["name"]] == 1 else f"{r['name']} #{r['id']}" for r in rows
    }
    return tuple(
        calendar.Stage(
            key=keys[r["id"]],
            name=r["name"],
            kind=r.get("kind", ""),
            machine=bool(r.get("machine", True)),
            resource=r.get("resource") or None,
            planned_hours=float(r["planned_hours"]),
            depends_on=tuple(keys[d] for d in r.get("depends_on", []) if d in keys),
        )
        for r in rows
    )


def baseline_from_snapshot(snapshot: dict[str, Any], digest: str | None) -> Baseline:
    return Baseline(
        digest=digest,
        items=tuple(
            BaselineItem(
                id=int(r["id"]),
                planned_hours=float(r["planned_hours"]),
                prep_hours=float(r.get("prep_hours") or 0),
                status=str(r.get("status") or ""),
            )
            for r in snapshot.get("items") or []
        ),
        stages=baseline_stages(snapshot.get("stages") or []),
    )


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
class Forecast:
    window_hours: float
    committed: bool
    reserved_hours: float
    forecast_hours: float
    observed_hours: float
    items: tuple[ItemForecast, ...]
    time_source: str
    advice: tuple[str, ...]
    lots: dict[str, Any]
    critical_path: tuple[str, ...] = ()
    inputs: dict[str, Any] = field(default_factory=dict)
    # Items whose planned hours were calibrated: raw and calibrated figures, and the sources.
    calibration: tuple[dict[str, Any], ...] = ()
    # The plan figures' names with the forecast hours (docs/domain.md §8.5): work_hours,
    # gpu_hours, calendar_hours, and machine_hours (what the lots must hold).
    figures: dict[str, float] = field(default_factory=dict)

    @property
    def fits_in_window(self) -> bool:
        return self.forecast_hours <= self.window_hours + 1e-9

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
            "uncommitted_hours": h(self.window_hours - self.forecast_hours),
            "over_hours": h(max(0.0, self.forecast_hours - self.window_hours)),
            "time_source": self.time_source,
            "time_sources": {k: sources.get(k, 0) for k in (PILOT, ASSUMED, OBSERVED, CALIBRATED)},
            "critical_path": list(self.critical_path),
            "items": [i.as_json() for i in self.items],
            "lots": self.lots,
            "advice": list(self.advice),
            "calibration": list(self.calibration),
            "figures": dict(self.figures),
        }
