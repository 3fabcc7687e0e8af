"""A stage's observed hours, from one source (docs/domain.md §8.6): the runs on its item.

Rule:

- A stage of an item **claims** that item's runs of the kind it stands for (`training` → full
  runs, `pilot` → pilot runs, `inference` → inference runs); the first such stage of an item
  (lowest id) claims them, so no run is counted twice.
- A run counts once it has ended (not `running`): its hours as the finish recorded them
  (campaigns/domain/run_hours.py: measured by its own clock, unless stated or corrected), which
  for a resumed run include its earlier segments; a run that ended without recorded hours
  counts its earlier segments (`prior_hours`) when it has any, else nothing.
- A stage's observed figure is **the runs' figure** (the sum over the runs it claims), unless
  the planner typed one: where no run was claimed, the typed figure is the only one
  ("recorded"); where it equals the runs' figure it is the runs' figure; where it differs, the
  typed figure stands with the reason the planner gave, and the runs' figure is shown beside it
  ("recorded, differs from the runs").
- Ended runs no stage claims (no item, or no stage of their kind) are **unattributed**: they
  count in the campaign's observed total, in no stage.

The campaign's observed total is the stages' figures plus the unattributed runs: the forecast,
the campaign page, the API and the closing report all show this one figure. Pure: no Django, no
I/O. Hours are Decimal to 0.01 h.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Final

from campaigns.domain.run_hours import ended_hours

# Which runs a stage of a planned item is made of.
RUN_KIND_FOR_STAGE: Final = {"training": "full", "pilot": "pilot", "inference": "inference"}

FROM_RUNS: Final = "runs"
RECORDED: Final = "recorded"
RECORDED_OVER_RUNS: Final = "recorded, differs from the runs"

Claim = tuple[int, str]


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


@dataclass(frozen=True)
class StageObserved:
    stage_id: int
    runs_hours: Decimal | None
    runs: int
    typed_hours: Decimal | None
    reason: str

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
    claims: dict[Claim, int] = {}
    for s in sorted(stages, key=lambda s: s.id):
        kind = RUN_KIND_FOR_STAGE.get(s.kind)
        if s.variant_id is not None and kind is not None:
            claims.setdefault((s.variant_id, kind), s.id)
    return claims


def reconcile(stages: Iterable[StageRow], runs: Iterable[RunRow]) -> Reconciled:
    """Each stage's observed figure and the unattributed runs (the rule above)."""
    rows = list(stages)
    claims = claims_of(rows)
    owner = {stage_id: claim for claim, stage_id in claims.items()}
    summed: dict[Claim, Decimal] = defaultdict(Decimal)
    counted: dict[Claim, int] = defaultdict(int)
    unattributed: dict[int | None, Decimal] = defaultdict(Decimal)
    for run in runs:
        hours = run_hours(run)
        if hours is None:
            continue
        claim = (run.variant_id, run.kind) if run.variant_id is not None else None
        if claim is not None and claim in claims:
            summed[claim] += hours
            counted[claim] += 1
        else:
            unattributed[run.variant_id] += hours
    observed = {}
    for s in rows:
        claim = owner.get(s.id)
        has_runs = claim is not None and counted.get(claim, 0) > 0
        observed[s.id] = StageObserved(
            stage_id=s.id,
            runs_hours=summed[claim] if has_runs and claim is not None else None,
            runs=counted.get(claim, 0) if claim is not None else 0,
            typed_hours=None if s.typed_hours is None else Decimal(s.typed_hours),
            reason=s.reason,
        )
    return Reconciled(observed, dict(unattributed), claims)
