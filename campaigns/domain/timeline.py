"""One timeline per campaign: the calendar as committed, as observed and as forecast
(docs/domain.md §7.7). Every hour figure a page, the API, the report, the lot advice, the
hardware options, the calibration or the clone states about a campaign's calendar is read from
the `Timeline` this module builds; none of them schedules stages itself.

The rule, per stage (one pass, in this order):

- **cut**: the stage's item was cut by a decision. It counts only what ran before the cut (its
  observed hours, else 0 h); it keeps its place in the committed calendar.
- **running**: a run the stage stands for is running. It lasts at least its forecast, and at
  least what its runs have taken so far.
- **done**: it has an observed figure (typed, or from the runs it stands for:
  campaigns/domain/observed_hours.py, docs/domain.md §8.6; never both). It lasts that long.
- **planned**: nothing shows it happened. It lasts its planned hours, scaled by its item's
  forecast ÷ reserved hours when the estimates forecast the item otherwise (only the item's
  `training` stages scale, or all its machine stages when it has no training stage); once the
  campaign is closed, nothing more runs: it takes no time.

The **committed calendar** schedules the frozen baseline's stages at their frozen hours (for a
draft, the plan's); the **current calendar** schedules the plan's stages at the durations above,
with the same rules (docs/domain.md §7.3: dependencies, one stage at a time per GPU), so a slip
moves every later stage and the critical path with it. A plan without stages runs its items one
after another (§7.5): each item becomes a machine stage (after its preparation, a human one).
The slack is the window minus the current calendar; the reserved lots are laid end to end from
hour 0 (a lot with its own start from there), and the hours still to buy are the machine time
the current calendar needs beyond the last lot's end.

Pure: no Django, no I/O. Planned hours arrive as Decimal, forecast hours as floats; the result's
hours are floats from hour 0 of the calendar (the start of preparation).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Final

from campaigns.domain import observed_hours
from campaigns.domain.observed_hours import Reconciled, RunRow, StageObserved
from campaigns.domain.plan_figures import ItemWork, PlanFigures, plan_figures
from campaigns.domain.timeline_calendar import (
    CUT,
    DONE,
    ITEM_CUT,
    PLANNED,
    RUNNING,
    ItemPlan,
    StagePlan,
    _Placed,
    duration,
    item_factor,
    item_stages,
    place,
    scaled_stage_ids,
    stage_keys,
)
from campaigns.domain.timeline_lots import LotPlan, LotSpan, lay_out_lots

__all__ = [
    "CUT",
    "DONE",
    "PLANNED",
    "RUNNING",
    "ItemPlan",
    "LotPlan",
    "LotSpan",
    "StagePlan",
    "Timeline",
    "TimelineInputs",
    "build",
]

_EPS: Final = 1e-9


@dataclass(frozen=True, kw_only=True)
class TimelineInputs:
    window_hours: Decimal
    stages: tuple[StagePlan, ...]
    items: tuple[ItemPlan, ...]
    runs: tuple[RunRow, ...] = ()
    lots: tuple[LotPlan, ...] = ()
    # The baseline's stages and items; None while a draft (the plan is the commitment).
    committed_stages: tuple[StagePlan, ...] | None = None
    committed_items: tuple[ItemPlan, ...] | None = None
    # Closed: nothing more runs, so a stage nothing shows happened takes no time.
    closed: bool = False


@dataclass(frozen=True)
class StageLine:
    """One stage on the timeline: where the committed plan put it and where it is now."""

    id: int
    key: str
    name: str
    kind: str
    machine: bool
    resource: str
    variant_id: int | None
    item: str | None
    state: str
    # The committed figure and place (None: not in the committed calendar).
    planned_hours: float | None
    planned_start: float | None
    planned_end: float | None
    observed: StageObserved
    # In the current calendar: how long, from when to when, and why that long.
    hours: float
    start: float
    end: float
    basis: str
    critical: bool = False


@dataclass(frozen=True)
class Timeline:
    window_hours: float
    stages: tuple[StageLine, ...]
    # The committed calendar's length and critical path (stage keys).
    planned_hours: float
    planned_critical_path: tuple[str, ...]
    # The current calendar (observed where it happened, forecast elsewhere).
    hours: float
    critical_path: tuple[str, ...]
    observed: Reconciled
    lots: tuple[LotSpan, ...]
    figures: PlanFigures
    # Hours of the current calendar's machine stages, and those tied to no item.
    machine_hours: float
    untied_machine_hours: float
    # When the current calendar's last machine stage ends.
    machine_end: float
    # Live items with no stage (their hours are in no calendar).
    items_without_stage: tuple[str, ...] = ()
    # Why the stages could not be scheduled (a dependency cycle), "" when they could.
    problem: str = ""
    # Per item: its current hours (its stages' durations), for the item forecasts' totals.
    item_hours: Mapping[int, float] = field(default_factory=dict)
    # The campaign is closed: the calendar is what ran, nothing more can be bought for it.
    closed: bool = False

    @property
    def slack_hours(self) -> float:
        """The window left after the current calendar (negative: over the window)."""
        return self.window_hours - self.hours

    @property
    def over_hours(self) -> float:
        return max(0.0, self.hours - self.window_hours)

    @property
    def fits(self) -> bool:
        return self.hours <= self.window_hours + _EPS

    @property
    def anything_observed(self) -> bool:
        return self.observed.any_observed or any(s.state == RUNNING for s in self.stages)

    @property
    def lots_end(self) -> float:
        return max((lot.end for lot in self.lots), default=0.0)

    @property
    def hours_to_buy(self) -> float | None:
        """Machine time past the last reserved lot's end; None without lots."""
        if not self.lots:
            return None
        return max(0.0, self.machine_end - self.lots_end)

    @property
    def observed_hours(self) -> Decimal | None:
        return self.observed.total if self.observed.any_observed else None

    def stage(self, stage_id: int) -> StageLine:
        for s in self.stages:
            if s.id == stage_id:
                return s
        raise KeyError(stage_id)


# --------------------------------------------------------------------------- the timeline


def _committed(inputs: TimelineInputs, stages: tuple[StagePlan, ...]) -> tuple[StagePlan, ...]:
    """The committed calendar's stages: the baseline's, else (a draft) the plan's."""
    if inputs.committed_stages:
        return inputs.committed_stages
    if inputs.committed_items is not None and inputs.committed_stages is not None:
        return item_stages(inputs.committed_items, committed=True)
    return stages


def _durations(
    stages: Sequence[StagePlan],
    seen: Reconciled,
    items: Mapping[int, ItemPlan],
    closed: bool,
) -> dict[int, tuple[str, float, str]]:
    scaled = scaled_stage_ids(stages)
    out: dict[int, tuple[str, float, str]] = {}
    for s in stages:
        item = items.get(s.variant_id) if s.variant_id is not None else None
        factor = item_factor(item) if item is not None and s.id in scaled else None
        observed = seen.stages[s.id]
        out[s.id] = duration(s, observed, item, factor, closed)
    return out


def _lines(
    stages: Sequence[StagePlan],
    states: Mapping[int, tuple[str, float, str]],
    seen: Reconciled,
    committed: _Placed,
    current: _Placed,
    items: Mapping[int, ItemPlan],
) -> tuple[StageLine, ...]:
    keys = stage_keys(stages)
    critical = set(current.critical)
    lines = []
    for s in stages:
        state, hours, basis = states[s.id]
        item = items.get(s.variant_id) if s.variant_id is not None else None
        planned = committed.start.get(s.id)
        lines.append(
            StageLine(
                id=s.id,
                key=keys[s.id],
                name=s.name,
                kind=s.kind,
                machine=s.machine,
                resource=s.resource,
                variant_id=s.variant_id,
                item=item.name if item is not None else None,
                state=state,
                planned_hours=None if planned is None else committed.end[s.id] - planned,
                planned_start=planned,
                planned_end=committed.end.get(s.id),
                observed=seen.stages[s.id],
                hours=hours,
                start=current.start[s.id],
                end=current.end[s.id],
                basis=basis,
                critical=s.id in critical,
            )
        )
    return tuple(lines)


def _figures(inputs: TimelineInputs, committed_hours: float, seen: Reconciled) -> PlanFigures:
    return plan_figures(
        [
            ItemWork(i.planned_hours, i.prep_hours, i.gpus, i.status == ITEM_CUT)
            for i in inputs.items
        ],
        calendar_hours=Decimal(str(committed_hours)),
        lots=[(lot.hours, lot.quantity) for lot in inputs.lots],
        window_hours=inputs.window_hours,
        observed_hours=seen.total if seen.any_observed else None,
    )


def _without_stage(inputs: TimelineInputs) -> tuple[str, ...]:
    if not inputs.stages:
        return ()
    staged = {s.variant_id for s in inputs.stages if s.variant_id is not None}
    return tuple(
        i.name
        for i in sorted(inputs.items, key=lambda i: i.id)
        if i.id not in staged and i.status != ITEM_CUT
    )


def _shape(stage: StagePlan) -> tuple[object, ...]:
    """What places a stage besides its hours."""
    return (stage.id, stage.machine, stage.resource, stage.depends_on)


def plan_stages(inputs: TimelineInputs) -> tuple[StagePlan, ...]:
    """The plan's stages; without any, its items one after another (§7.5)."""
    return inputs.stages or item_stages(inputs.items)


def observe(inputs: TimelineInputs) -> Reconciled:
    """Each stage's observed figure and the runs no stage stands for (docs/domain.md §8.6)."""
    return observed_hours.reconcile(
        (
            observed_hours.StageRow(s.id, s.variant_id, s.kind, s.typed_hours, s.typed_reason)
            for s in plan_stages(inputs)
        ),
        inputs.runs,
    )


def _schedules(
    stages: Sequence[StagePlan],
    frozen: Sequence[StagePlan],
    durations: Mapping[int, float],
    window: float,
) -> tuple[_Placed, _Placed]:
    """The committed schedule (the frozen stages at their planned hours) and the current one."""
    planned = {s.id: float(s.planned_hours) for s in frozen}
    current = place(stages, durations, window)
    # Nothing slipped yet (a draft, or a plan as committed): one schedule serves both.
    same = durations == planned and [_shape(s) for s in frozen] == [_shape(s) for s in stages]
    return (current if same else place(frozen, planned, window)), current


def _item_hours(machine: Sequence[StageLine]) -> dict[int, float]:
    """Each item's machine hours, summed over its stages."""
    item_hours: dict[int, float] = {}
    for line in machine:
        if line.variant_id is not None:
            item_hours[line.variant_id] = item_hours.get(line.variant_id, 0.0) + line.hours
    return item_hours


def build(inputs: TimelineInputs) -> Timeline:
    """The campaign's timeline (the rule in the module docstring)."""
    window = float(inputs.window_hours)
    stages = plan_stages(inputs)
    frozen = _committed(inputs, stages)
    items = {i.id: i for i in inputs.items}
    seen = observe(inputs)
    states = _durations(stages, seen, items, inputs.closed)
    durations = {k: v[1] for k, v in states.items()}
    committed, current = _schedules(stages, frozen, durations, window)
    lines = _lines(stages, states, seen, committed, current, items)
    keys = stage_keys(stages)
    frozen_keys = stage_keys(frozen)
    machine = [line for line in lines if line.machine]
    return Timeline(
        window_hours=window,
        stages=lines,
        planned_hours=committed.makespan,
        planned_critical_path=tuple(frozen_keys[i] for i in committed.critical),
        hours=current.makespan,
        critical_path=tuple(keys[i] for i in current.critical),
        observed=seen,
        lots=lay_out_lots(inputs.lots),
        figures=_figures(inputs, committed.makespan, seen),
        machine_hours=sum(line.hours for line in machine),
        untied_machine_hours=sum(line.hours for line in machine if line.variant_id not in items),
        machine_end=max((line.end for line in machine), default=0.0),
        items_without_stage=_without_stage(inputs),
        problem=current.problem or committed.problem,
        item_hours=_item_hours(machine),
        closed=inputs.closed,
    )
