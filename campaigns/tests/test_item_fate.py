"""The item fate shared by the API and the closing report (campaigns/domain/item_fate.py)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from campaigns.domain.item_fate import FATES, item_fate, status_of

counts = st.fixed_dictionaries(
    {
        s: st.integers(min_value=0, max_value=3)
        for s in ("running", "stopped", "completed", "failed")
    }
)


def test_an_item_whose_pilots_ran_is_still_planned() -> None:
    # Pilots are not counted as full runs: the caller passes full runs only.
    assert item_fate(cut=False, full_runs={}) == "planned"


def test_a_completed_full_run_makes_it_done_even_after_a_stopped_one() -> None:
    assert item_fate(cut=False, full_runs={"stopped": 2, "completed": 1}) == "done"


def test_a_running_full_run_is_not_yet_stopped() -> None:
    assert item_fate(cut=False, full_runs={"stopped": 1, "running": 1}) == "running"


def test_stopped_and_failed() -> None:
    assert item_fate(cut=False, full_runs={"stopped": 1, "failed": 1}) == "stopped"
    assert item_fate(cut=False, full_runs={"failed": 2}) == "failed"


@given(counts)
def test_a_cut_wins_over_any_runs(runs: dict[str, int]) -> None:
    assert item_fate(cut=True, full_runs=runs) == "cut"


@given(st.booleans(), counts)
def test_the_api_status_is_one_of_its_four_values(cut: bool, runs: dict[str, int]) -> None:
    fate = item_fate(cut=cut, full_runs=runs)
    assert fate in FATES
    assert status_of(fate) in ("planned", "done", "cut", "stopped")
