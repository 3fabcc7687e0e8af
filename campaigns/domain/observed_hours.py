"""A stage's observed hours, from one source (docs/domain.md §8.6): the runs it stands for.

Rule:

- A stage of an item **claims** that item's runs of the kind it stands for (`training` → full
  runs, `pilot` → pilot runs, `inference` → inference runs); the first such stage of an item
  (lowest id) claims them, so no run is counted twice.
- A stage tied to no item (a campaign-wide "Pilot" or "Training" stage) claims the runs of its
  kind that no item's stage claims (the first such stage, lowest id): hours typed on it and the
  runs' hours are then one figure, never both (docs/domain.md §8.6, §7.7).
- A run counts once it has ended (not `running`): its hours as the finish recorded them
  (campaigns/domain/run_hours.py: measured by its own clock, unless stated or corrected), which
  for a resumed run include its earlier segments; a run that ended without recorded hours
  counts its earlier segments (`prior_hours`) when it has any, else nothing. A running run
  counts nowhere in the observed figures; its hours so far (`running_hours`) tell the timeline
  how long its stage has run already.
- A stage's observed figure is **the runs' figure** (the sum over the runs it claims), unless
  the planner typed one: where no run was claimed, the typed figure is the only one
  ("recorded"); where it equals the runs' figure it is the runs' figure; where it differs, the
  typed figure stands with the reason the planner gave, and the runs' figure is shown beside it
  ("recorded, differs from the runs").
- Ended runs no stage claims are **unattributed**: they count in the campaign's observed total,
  in no stage, and are listed apart.

The campaign's observed total is the stages' figures plus the unattributed runs: the timeline
(campaigns/domain/timeline.py), and through it every page, the API and the closing report, show
this one figure. Pure: no Django, no I/O. Hours are Decimal to 0.01 h.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Final

from campaigns.domain.run_hours import RUNNING, ended_hours

# Which runs a stage stands for.
RUN_KIND_FOR_STAGE: Final = {"training": "full", "pilot": "pilot", "inference": "inference"}
# Observed hours further than this from the planned ones need a note saying why (§8.4).
DEVIATION_NEEDING_NOTE: Final = Decimal("0.10")


def needs_deviation_note(planned: Decimal, observed: Decimal) -> bool:
    """More than 10% away from the plan needs an explanation; any hour of a stage planned at
    none does."""
    if planned == 0:
        return observed != 0
    return abs(observed - planned) > planned * DEVIATION_NEEDING_NOTE


FROM_RUNS: Final = "runs"
RECORDED: Final = "recorded"
RECORDED_OVER_RUNS: Final = "recorded, differs from the runs"

# (item id, run kind); item None: the campaign-wide stage of that kind.
Claim = tuple[int | None, str]


@dataclass(frozen=True)
class StageRow:
    id: int
    variant_id: int | None
    kind: str
    # What the planner typed (None: nothing), and why it differs from the runs.
    typed_hours: Decimal | None = None
    reason: str = ""


@dataclass(frozen=True)
class RunRow:
    variant_id: int | None
    kind: str
    status: str
    observed_hours: Decimal | None
    # A resumed run's earlier segments (docs/domain.md §11.6).
    prior_hours: Decimal = Decimal(0)
    # While it runs: the hours it has run so far, segments included (0 once it ended).
    running_hours: Decimal = Decimal(0)


@dataclass(frozen=True)
class StageObserved:
    stage_id: int
    runs_hours: Decimal | None
    runs: int
    typed_hours: Decimal | None
    reason: str
    # Runs of the stage still running, and the hours they have run so far.
    running: int = 0
    running_hours: Decimal = Decimal(0)

    @property
    def hours(self) -> Decimal | None:
        """The stage's one observed figure."""
        return self.typed_hours if self.typed_hours is not None else self.runs_hours

    @property
    def source(self) -> str | None:
        if self.typed_hours is None:
            return FROM_RUNS if self.runs_hours is not None else None
        if self.runs_hours is None:
            return RECORDED
        return FROM_RUNS if self.typed_hours == self.runs_hours else RECORDED_OVER_RUNS

    @property
    def needs_reason(self) -> bool:
        """A typed figure differs from the runs' and nobody said why."""
        return self.source == RECORDED_OVER_RUNS and not self.reason.strip()


@dataclass(frozen=True)
class Reconciled:
    stages: dict[int, StageObserved]
    # Ended runs no stage claims, by item (None: runs of no item).
    unattributed: dict[int | None, Decimal] = field(default_factory=dict)
    # Which stage claims an (item, run kind).
    claims: dict[Claim, int] = field(default_factory=dict)
    # How many ended runs no stage claims.
    unattributed_runs: int = 0

    def hours(self, stage_id: int) -> Decimal | None:
        found = self.stages.get(stage_id)
        return found.hours if found is not None else None

    @property
    def unattributed_hours(self) -> Decimal:
        return sum(self.unattributed.values(), Decimal(0))

    @property
    def any_observed(self) -> bool:
        return bool(self.unattributed) or any(s.hours is not None for s in self.stages.values())

    @property
    def total(self) -> Decimal:
        """The campaign's observed hours: every stage's figure plus the unattributed runs."""
        staged = sum((s.hours for s in self.stages.values() if s.hours is not None), Decimal(0))
        return staged + self.unattributed_hours


def run_hours(run: RunRow) -> Decimal | None:
    """What an ended run took (its segments included); None while it runs or when unknown.
    Read as campaigns/domain/run_hours.py records it (measured, stated or corrected)."""
    return ended_hours(
        status=run.status, observed_hours=run.observed_hours, prior_hours=run.prior_hours
    )


def claims_of(stages: Iterable[StageRow]) -> dict[Claim, int]:
    """Which stage stands for which runs: an item's first stage of a kind for that item's runs
    of the kind, the first stage of a kind tied to no item for the rest of that kind."""
    claims: dict[Claim, int] = {}
    for s in sorted(stages, key=lambda s: s.id):
        kind = RUN_KIND_FOR_STAGE.get(s.kind)
        if kind is not None:
            claims.setdefault((s.variant_id, kind), s.id)
    return claims


def claim_of(run: RunRow, claims: dict[Claim, int]) -> int | None:
    """The stage that stands for this run, or None (the run is unattributed)."""
    if run.variant_id is not None and (run.variant_id, run.kind) in claims:
        return claims[(run.variant_id, run.kind)]
    return claims.get((None, run.kind))


@dataclass
class _Sums:
    hours: dict[int, Decimal] = field(default_factory=lambda: defaultdict(Decimal))
    ended: dict[int, int] = field(default_factory=lambda: defaultdict(int))
    running: dict[int, int] = field(default_factory=lambda: defaultdict(int))
    running_hours: dict[int, Decimal] = field(default_factory=lambda: defaultdict(Decimal))
    unattributed: dict[int | None, Decimal] = field(default_factory=lambda: defaultdict(Decimal))
    unattributed_runs: int = 0


def _sum_runs(runs: Iterable[RunRow], claims: dict[Claim, int]) -> _Sums:
    sums = _Sums()
    for run in runs:
        stage_id = claim_of(run, claims)
        if run.status == RUNNING:
            if stage_id is not None:
                sums.running[stage_id] += 1
                sums.running_hours[stage_id] += max(Decimal(run.running_hours), Decimal(0))
            continue
        hours = run_hours(run)
        if hours is None:
            continue
        if stage_id is None:
            sums.unattributed[run.variant_id] += hours
            sums.unattributed_runs += 1
        else:
            sums.hours[stage_id] += hours
            sums.ended[stage_id] += 1
    return sums


def reconcile(stages: Iterable[StageRow], runs: Iterable[RunRow]) -> Reconciled:
    """Each stage's observed figure and the unattributed runs (the rule above)."""
    rows = list(stages)
    claims = claims_of(rows)
    sums = _sum_runs(runs, claims)
    observed = {
        s.id: StageObserved(
            stage_id=s.id,
            runs_hours=sums.hours[s.id] if sums.ended.get(s.id) else None,
            runs=sums.ended.get(s.id, 0),
            typed_hours=None if s.typed_hours is None else Decimal(s.typed_hours),
            reason=s.reason,
            running=sums.running.get(s.id, 0),
            running_hours=sums.running_hours.get(s.id, Decimal(0)),
        )
        for s in rows
    }
    return Reconciled(observed, dict(sums.unattributed), claims, sums.unattributed_runs)
