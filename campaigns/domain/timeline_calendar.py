"""The timeline's calendar arithmetic (docs/domain.md §7.7): stage names as people read them,
a stageless plan's items as stages, where each stage goes (campaigns/domain/calendar.py's
scheduling, a cycle counted in sequence), and each stage's state and duration in the current
calendar. Pure: no Django, no I/O; hours are floats, planned hours Decimal.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Final

from campaigns.domain import calendar
from campaigns.domain.observed_hours import StageObserved

PLANNED: Final = "planned"
RUNNING: Final = "running"
DONE: Final = "done"
CUT: Final = "cut"
# A planned stage's basis when its own factor (the team's calibration) scales it.
CALIBRATED: Final = "calibrated"
ITEM_CUT: Final = "cut"
# The basis of a stage a closed campaign never observed: it takes no time.
NOT_OBSERVED: Final = "not observed"
# A pilot measures training throughput: it rescales an item's training stages only.
SCALED_KINDS: Final = frozenset({"training"})
_EPS: Final = 1e-9


@dataclass(frozen=True, kw_only=True)
class StagePlan:
    """A stage as planned (or as the baseline froze it), with what was typed on it."""

    id: int
    name: str
    kind: str
    machine: bool
    resource: str = ""
    planned_hours: Decimal
    variant_id: int | None = None
    depends_on: tuple[int, ...] = ()
    typed_hours: Decimal | None = None
    typed_reason: str = ""
    # What the forecast multiplies the planned hours by when no item's forecast scales the
    # stage (a stage tied to no item: the team's calibration median, docs/domain.md §20).
    factor: float | None = None


@dataclass(frozen=True, kw_only=True)
class ItemPlan:
    id: int
    name: str
    tier: str = "mandatory"
    status: str = "planned"
    planned_hours: Decimal
    prep_hours: Decimal = Decimal(0)
    gpus: int | None = None
    gpu: str = ""
    # The frozen baseline's planned hours (None: added after commit); a draft's: the plan's.
    reserved_hours: Decimal | None = None
    # The item's forecast work hours (the estimates' rule); None: its reserved hours stand.
    forecast_hours: float | None = None


def stage_keys(stages: Sequence[StagePlan]) -> dict[int, str]:
    """Stage names as people read them; `name #id` only where names repeat."""
    names = Counter(s.name for s in stages)
    return {s.id: s.name if names[s.name] == 1 else f"{s.name} #{s.id}" for s in stages}


def item_stages(items: Sequence[ItemPlan], *, committed: bool = False) -> tuple[StagePlan, ...]:
    """Without a calendar, the live items one after another (docs/domain.md §7.5): each item's
    preparation (people), then its work (one machine), as stages with negative ids."""
    out: list[StagePlan] = []
    previous: tuple[int, ...] = ()
    for item in sorted(items, key=lambda i: i.id):
        if item.status == ITEM_CUT and committed:
            continue
        hours = item.reserved_hours if committed and item.reserved_hours is not None else None
        work = Decimal(hours if hours is not None else item.planned_hours)
        if item.prep_hours > 0:
            prep = StagePlan(
                id=-2 * item.id - 1,
                name=f"{item.name} (preparation)",
                kind="human_prep",
                machine=False,
                planned_hours=Decimal(item.prep_hours),
                depends_on=previous,
            )
            out.append(prep)
            previous = (prep.id,)
        stage = StagePlan(
            id=-2 * item.id,
            name=item.name,
            kind="training",
            machine=True,
            resource=item.gpu or calendar.UNASSIGNED_RESOURCE,
            planned_hours=work,
            variant_id=item.id,
            depends_on=previous,
        )
        out.append(stage)
        previous = (stage.id,)
    return tuple(out)


def _calendar_stages(
    stages: Sequence[StagePlan], durations: Mapping[int, float]
) -> list[calendar.Stage]:
    known = {s.id for s in stages}
    return [
        calendar.Stage(
            key=str(s.id),
            name=s.name,
            kind=s.kind,
            machine=s.machine,
            resource=s.resource or None,
            planned_hours=max(durations[s.id], 0.0),
            depends_on=tuple(str(d) for d in s.depends_on if d in known),
        )
        for s in stages
    ]


@dataclass(frozen=True)
class _Placed:
    start: dict[int, float]
    end: dict[int, float]
    makespan: float
    critical: tuple[int, ...]
    problem: str = ""


def place(stages: Sequence[StagePlan], durations: Mapping[int, float], window: float) -> _Placed:
    """Schedule the stages (docs/domain.md §7.3); a cycle puts them one after another."""
    try:
        plan = calendar.schedule(_calendar_stages(stages, durations), window)
    except ValueError as exc:
        at, start, end = 0.0, {}, {}
        for s in stages:
            start[s.id], end[s.id] = at, at + durations[s.id]
            at = end[s.id]
        return _Placed(start, end, at, (), f"{exc}; the stages are counted one after another")
    start = {int(e.key): e.start_hours for e in plan.entries}
    end = {int(e.key): e.end_hours for e in plan.entries}
    return _Placed(start, end, plan.makespan_hours, tuple(int(k) for k in plan.critical_path))


# --------------------------------------------------------------------------- durations


def scaled_stage_ids(stages: Sequence[StagePlan]) -> frozenset[int]:
    """The stages an item's forecast rescales: its machine training stages, else all its
    machine stages."""
    linked: dict[int, list[StagePlan]] = {}
    for s in stages:
        if s.variant_id is not None and s.machine:
            linked.setdefault(s.variant_id, []).append(s)
    scaled: set[int] = set()
    for group in linked.values():
        training = [s for s in group if s.kind in SCALED_KINDS]
        scaled.update(s.id for s in (training or group))
    return frozenset(scaled)


def item_factor(item: ItemPlan) -> float | None:
    """Forecast ÷ reserved hours of the item's work; None when it is not forecast otherwise."""
    if item.forecast_hours is None:
        return None
    basis = float(item.reserved_hours if item.reserved_hours is not None else item.planned_hours)
    if basis <= 0 or abs(item.forecast_hours - basis) <= _EPS:
        return None
    return item.forecast_hours / basis


def duration(
    stage: StagePlan,
    seen: StageObserved,
    item: ItemPlan | None,
    factor: float | None,
    closed: bool = False,
) -> tuple[str, float, str]:
    """The stage's state, its hours in the current calendar, and their basis (the rule in
    campaigns/domain/timeline.py); once the campaign is closed, a stage nothing shows happened
    takes no time (nothing more will run). A planned stage no item's forecast scales is
    scaled by its own `factor` when it has one (basis `calibrated`)."""
    observed = float(seen.hours) if seen.hours is not None else None
    if item is not None and item.status == ITEM_CUT:
        ran = (observed or 0.0) + float(seen.running_hours)
        return CUT, ran, CUT
    basis = "forecast" if factor is not None else PLANNED
    if factor is None and stage.factor is not None:
        factor, basis = stage.factor, CALIBRATED
    forecast = float(stage.planned_hours) * (factor if factor is not None else 1.0)
    if seen.running:
        so_far = (observed or 0.0) + float(seen.running_hours)
        return RUNNING, max(forecast, so_far), RUNNING
    if observed is not None:
        return DONE, observed, "observed"
    if closed:
        return PLANNED, 0.0, NOT_OBSERVED
    return PLANNED, forecast, basis
