"""The item fate shared by the API and the closing report (campaigns/domain/item_fate.py,
docs/domain.md §5.5): from the facts, with what verified it."""

from __future__ import annotations

from decimal import Decimal

from hypothesis import given
from hypothesis import strategies as st

from campaigns.domain.item_fate import (
    FATES,
    DeliverableFact,
    StageFact,
    item_fate,
    status_of,
)
from campaigns.domain.observed_hours import StageObserved

counts = st.fixed_dictionaries(
    {
        s: st.integers(min_value=0, max_value=3)
        for s in ("running", "stopped", "completed", "failed")
    }
)


def typed(name: str, hours: str, kind: str = "validation") -> StageFact:
    seen = StageObserved(1, None, 0, Decimal(hours), "")
    return StageFact(name, kind, "done", seen)


def by_runs(name: str, hours: str, runs: int = 1, kind: str = "training") -> StageFact:
    seen = StageObserved(1, Decimal(hours), runs, None, "")
    return StageFact(name, kind, "done", seen)


def planned(name: str, kind: str = "training") -> StageFact:
    return StageFact(name, kind, "planned", StageObserved(1, None, 0, None, ""))


DELIVERED = DeliverableFact(3, "predictions", "tickets @ abc", "check-1")
stage_facts = st.lists(
    st.sampled_from([typed("a", "1"), by_runs("b", "2"), planned("c"), planned("p", "pilot")]),
    max_size=4,
)


def test_an_item_whose_pilots_ran_is_still_planned() -> None:
    # Pilots are not counted as full runs: the caller passes full runs only.
    assert item_fate(cut=False, full_runs={}).fate == "planned"


def test_a_completed_full_run_makes_it_done_even_after_a_stopped_one() -> None:
    found = item_fate(cut=False, full_runs={"stopped": 2, "completed": 1})
    assert (found.fate, found.verified_by) == ("done", ("1 completed full run",))


def test_a_running_full_run_is_not_yet_stopped() -> None:
    assert item_fate(cut=False, full_runs={"stopped": 1, "running": 1}).fate == "running"


def test_stopped_and_failed() -> None:
    assert item_fate(cut=False, full_runs={"stopped": 1, "failed": 1}).fate == "stopped"
    assert item_fate(cut=False, full_runs={"failed": 2}).fate == "failed"


def test_a_data_check_whose_stage_was_typed_is_done_verified_by_the_typed_stage() -> None:
    found = item_fate(cut=False, full_runs={}, stages=[typed("Check the data", "1")])
    assert (found.fate, found.verified_by) == ("done", ("Check the data: 1.00 h typed",))


def test_a_stage_done_by_its_runs_says_so_and_a_pilot_stage_settles_nothing() -> None:
    stages = [planned("Pilot", "pilot"), by_runs("Train", "20.9", runs=2)]
    found = item_fate(cut=False, full_runs={}, stages=stages)
    assert found.verified_by == ("Train: 20.90 h from its 2 runs",)
    assert item_fate(cut=False, full_runs={}, stages=[typed("Pilot", "3", "pilot")]).fate == (
        "planned"
    )


def test_a_typed_figure_over_the_runs_shows_both() -> None:
    seen = StageObserved(1, Decimal("12"), 1, Decimal("13"), "the clock was off")
    found = item_fate(
        cut=False, full_runs={}, stages=[StageFact("Train", "training", "done", seen)]
    )
    assert found.verified_by == ("Train: 13.00 h typed (its runs: 12.00 h)",)


def test_partly_done_stays_planned_and_says_which_stages_are_done() -> None:
    found = item_fate(cut=False, full_runs={}, stages=[typed("Check", "1"), planned("Train")])
    assert (found.fate, found.verified_by) == ("planned", ())
    assert (found.stages_done, found.stages_left) == (("Check",), ("Train",))


def test_an_accepted_deliverable_from_its_run_verifies_it_where_the_caller_reads_them() -> None:
    found = item_fate(cut=False, full_runs={}, deliverables=[DELIVERED])
    assert found.fate == "done"
    assert found.verified_by == (
        "accepted deliverable #3 (predictions, tickets @ abc) from run check-1",
    )
    # The API cannot read ledger rows: without them the same item is planned, verified by none.
    assert item_fate(cut=False, full_runs={}, deliverables=None).verified_by == ()


def test_a_stopped_run_is_stopped_even_when_its_stage_took_its_hours() -> None:
    found = item_fate(cut=False, full_runs={"stopped": 1}, stages=[by_runs("Train", "3")])
    assert (found.fate, found.verified_by) == ("stopped", ())


@given(counts, stage_facts, st.booleans())
def test_a_cut_wins_over_any_runs_and_facts(
    runs: dict[str, int], stages: list[StageFact], delivered: bool
) -> None:
    found = item_fate(
        cut=True, full_runs=runs, stages=stages, deliverables=[DELIVERED] if delivered else []
    )
    assert (found.fate, found.verified_by) == ("cut", ())


@given(st.booleans(), counts, stage_facts, st.booleans())
def test_done_always_says_what_verified_it_and_nothing_else_does(
    cut: bool, runs: dict[str, int], stages: list[StageFact], delivered: bool
) -> None:
    found = item_fate(
        cut=cut, full_runs=runs, stages=stages, deliverables=[DELIVERED] if delivered else None
    )
    assert found.fate in FATES
    assert status_of(found.fate) in ("planned", "done", "cut", "stopped")
    assert bool(found.verified_by) == (found.fate == "done")
    # Planned only where nothing shows it happened: no full run, no work stage left undone
    # with all done, no deliverable.
    if found.fate == "planned":
        assert not any(runs.values()) and not delivered
        work = [s for s in stages if s.kind != "pilot"]
        assert not work or any(s.state != "done" for s in work)


@given(counts, stage_facts)
def test_the_api_without_deliverables_never_says_more_than_the_report(
    runs: dict[str, int], stages: list[StageFact]
) -> None:
    api = item_fate(cut=False, full_runs=runs, stages=stages, deliverables=None)
    report = item_fate(cut=False, full_runs=runs, stages=stages, deliverables=[DELIVERED])
    if api.fate == "done":
        assert report.fate == "done"
        assert set(api.verified_by) <= set(report.verified_by)
    else:
        assert report.fate in (api.fate, "done")
