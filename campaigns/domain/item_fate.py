"""An item's fate, from the facts (docs/domain.md §5.5), and what verified it.

Pure: no Django. The one derivation behind the API's item ``status``/``fate``/``verified_by``
and the closing report's fate, so the two cannot disagree on what they both see.

The facts: the item's **full** runs by status (pilots measure throughput and check the setup,
they are not the item's result), its **stages** as the campaign's timeline states them
(campaigns/domain/timeline.py: planned, running, done or cut, each done stage's one observed
figure and where it came from, §8.6), and, where the caller reads them, the **accepted
deliverables** naming one of the item's runs (a ledger fact: the closing report passes them,
the campaigns app's API cannot read ledger rows and passes ``None``). In order of precedence:

- ``cut``: a decision cut the item (whatever ran before);
- ``done``: a full run completed; or else, once no full run is running, stopped or failed,
  every one of its work stages (its stages but the pilot ones, which only measure) is done, or
  an accepted deliverable names one of its runs;
- ``running``: a full run is still running;
- ``stopped``: full runs ran and a stop rule ended at least one, none completed;
- ``failed``: full runs ran and all failed;
- ``planned``: nothing shows it happened (pilots may have run; some of its stages may be done,
  and the words say which).

``verified_by`` lists every fact that shows a done item done, in words: "1 completed full
run", "Check the data: 1.00 h typed", "Train: 20.90 h from its 1 run", "accepted deliverable
#3 (predictions, tickets @ abc) from run base-1". The API's ``status`` keeps its four values:
``running`` and ``failed`` read as ``planned`` there (the item still awaits a result), see
``status_of``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Final, Literal

from campaigns.domain.formatting import format_hours_fixed
from campaigns.domain.observed_hours import FROM_RUNS, RECORDED, StageObserved
from campaigns.domain.timeline import StageLine

Fate = Literal["cut", "done", "running", "stopped", "failed", "planned"]
FATES: tuple[Fate, ...] = ("done", "cut", "stopped", "running", "failed", "planned")
# The timeline's stage states (campaigns/domain/timeline_calendar.py).
STAGE_DONE: Final = "done"
# A pilot stage measures the item's throughput; it is not the item's work.
MEASURING_KINDS: Final = frozenset({"pilot"})


@dataclass(frozen=True)
class StageFact:
    """One of the item's stages as the timeline states it."""

    name: str
    kind: str
    state: str
    observed: StageObserved | None = None


@dataclass(frozen=True)
class DeliverableFact:
    """An accepted deliverable (every check passed) naming one of the item's runs."""

    id: int
    kind: str
    corpus: str
    run_id: str


@dataclass(frozen=True)
class ItemFate:
    fate: Fate
    verified_by: tuple[str, ...] = ()
    # The item's work stages that are done, and those that are not (for the words).
    stages_done: tuple[str, ...] = ()
    stages_left: tuple[str, ...] = ()


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def stage_words(stage: StageFact) -> str:
    """What a done stage's figure is and where it came from."""
    seen = stage.observed
    if seen is None or seen.hours is None:
        return f"{stage.name}: done"
    hours = format_hours_fixed(Decimal(seen.hours))
    if seen.source == FROM_RUNS:
        return f"{stage.name}: {hours} h from its {_plural(seen.runs, 'run')}"
    if seen.source == RECORDED:
        return f"{stage.name}: {hours} h typed"
    runs = format_hours_fixed(seen.runs_hours) if seen.runs_hours is not None else "?"
    return f"{stage.name}: {hours} h typed (its runs: {runs} h)"


def deliverable_words(d: DeliverableFact) -> str:
    return f"accepted deliverable #{d.id} ({d.kind}, {d.corpus}) from run {d.run_id}"


# Full runs by status, in order of precedence, and the fate each gives.
_BY_RUNS: Final[tuple[tuple[str, Fate], ...]] = (
    ("completed", "done"),
    ("running", "running"),
    ("stopped", "stopped"),
    ("failed", "failed"),
)


def _from_runs(full_runs: Mapping[str, int]) -> Fate | None:
    for status, fate in _BY_RUNS:
        if full_runs.get(status, 0):
            return fate
    return None


def stage_facts(lines: Iterable[StageLine]) -> dict[int, list[StageFact]]:
    """Each item's stages as the timeline states them, by item id (stages tied to no item
    settle no item)."""
    facts: dict[int, list[StageFact]] = {}
    for line in lines:
        if line.variant_id is not None:
            facts.setdefault(line.variant_id, []).append(
                StageFact(line.key, line.kind, line.state, line.observed)
            )
    return facts


def _evidence(
    full_runs: Mapping[str, int],
    work: Sequence[StageFact],
    left: Sequence[str],
    deliverables: Sequence[DeliverableFact] | None,
) -> list[str]:
    """Every fact that would show the item done, in words: completed full runs, all its work
    stages done, accepted deliverables."""
    verified: list[str] = []
    completed = full_runs.get("completed", 0)
    if completed:
        verified.append(f"{_plural(completed, 'completed full run')}")
    if work and not left:
        verified.extend(stage_words(s) for s in work)
    verified.extend(deliverable_words(d) for d in deliverables or ())
    return verified


def item_fate(
    *,
    cut: bool,
    full_runs: Mapping[str, int],
    stages: Iterable[StageFact] = (),
    deliverables: Sequence[DeliverableFact] | None = None,
) -> ItemFate:
    """The item's fate and what verified it (the rule above). ``full_runs`` counts its full
    runs by run status (missing = 0); ``stages`` are its stages on the timeline;
    ``deliverables`` None when the caller cannot read them."""
    work = [s for s in stages if s.kind not in MEASURING_KINDS]
    done = tuple(s.name for s in work if s.state == STAGE_DONE)
    left = tuple(s.name for s in work if s.state != STAGE_DONE)
    if cut:
        return ItemFate("cut", (), done, left)
    verified = _evidence(full_runs, work, left, deliverables)
    # Full runs settle the fate first; the other facts only when no full run says anything.
    fate = _from_runs(full_runs) or ("done" if verified else "planned")
    # Only a done item lists what verified it.
    return ItemFate(fate, tuple(verified) if fate == "done" else (), done, left)


def fates_of(
    items: Iterable[tuple[int, bool]],
    full_runs: Mapping[int, Mapping[str, int]],
    stages: Mapping[int, Sequence[StageFact]],
    deliverables: Mapping[int, Sequence[DeliverableFact]] | None = None,
) -> dict[int, ItemFate]:
    """Every item's fate by item id; `items` as (id, cut), the facts by item id (`deliverables`
    None when the caller cannot read them)."""
    return {
        item_id: item_fate(
            cut=cut,
            full_runs=full_runs.get(item_id, {}),
            stages=stages.get(item_id, ()),
            deliverables=None if deliverables is None else deliverables.get(item_id, ()),
        )
        for item_id, cut in items
    }


def status_of(fate: Fate) -> str:
    """The API's item ``status`` (planned, done, cut, stopped) for a fate."""
    return fate if fate in ("cut", "done", "stopped") else "planned"
