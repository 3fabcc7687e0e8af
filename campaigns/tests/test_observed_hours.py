"""A stage's observed hours come from the runs on its item, once (docs/domain.md §8.6): the rule
in campaigns/domain/observed_hours.py, without a database."""

from __future__ import annotations

from decimal import Decimal

from hypothesis import given
from hypothesis import strategies as st

from campaigns.domain.observed_hours import (
    FROM_RUNS,
    RECORDED,
    RECORDED_OVER_RUNS,
    RunRow,
    StageRow,
    reconcile,
    run_hours,
)


def test_a_training_stage_takes_its_items_ended_full_runs_and_nothing_else() -> None:
    stages = [StageRow(1, 10, "training"), StageRow(2, 10, "validation")]
    runs = [
        RunRow(10, "full", "completed", Decimal("9.5")),
        RunRow(10, "full", "failed", Decimal("1.25")),
        RunRow(10, "full", "running", None, Decimal("3")),  # still running: not yet
        RunRow(10, "pilot", "completed", Decimal("0.5")),  # no pilot stage: unattributed
    ]
    seen = reconcile(stages, runs)
    assert seen.stages[1].hours == Decimal("10.75")
    assert (seen.stages[1].source, seen.stages[1].runs) == (FROM_RUNS, 2)
    assert seen.stages[2].hours is None
    assert seen.unattributed == {10: Decimal("0.5")}
    assert seen.total == Decimal("11.25")


def test_only_the_first_stage_of_an_item_and_kind_claims_its_runs() -> None:
    stages = [StageRow(7, 1, "training"), StageRow(3, 1, "training")]
    seen = reconcile(stages, [RunRow(1, "full", "completed", Decimal("4"))])
    assert seen.stages[3].hours == Decimal("4")
    assert seen.stages[7].hours is None
    assert seen.total == Decimal("4")


def test_a_typed_figure_stands_alone_without_runs_and_with_its_reason_beside_them() -> None:
    stages = [
        StageRow(1, None, "setup", Decimal("2.5")),
        StageRow(2, 5, "training", Decimal("13"), "restore not logged"),
        StageRow(3, 6, "training", Decimal("4")),
    ]
    runs = [
        RunRow(5, "full", "completed", Decimal("12")),
        RunRow(6, "full", "completed", Decimal("4")),
    ]
    seen = reconcile(stages, runs)
    assert (seen.stages[1].hours, seen.stages[1].source) == (Decimal("2.5"), RECORDED)
    typed = seen.stages[2]
    assert (typed.hours, typed.runs_hours, typed.source) == (
        Decimal("13"),
        Decimal("12"),
        RECORDED_OVER_RUNS,
    )
    assert not typed.needs_reason
    # Typing what the runs say is the runs' figure.
    assert seen.stages[3].source == FROM_RUNS
    assert seen.total == Decimal("19.5")


def test_a_resumed_run_that_ended_without_hours_counts_its_segments() -> None:
    assert run_hours(RunRow(1, "full", "failed", None, Decimal("3.5"))) == Decimal("3.5")
    assert run_hours(RunRow(1, "full", "completed", None)) is None
    assert run_hours(RunRow(1, "full", "running", Decimal("2"), Decimal("2"))) is None


hours = st.decimals(min_value=0, max_value=1000, places=2)


@given(
    st.lists(
        st.tuples(st.sampled_from([1, 2, None]), st.sampled_from(["full", "pilot"]), hours),
        max_size=12,
    ),
    st.lists(st.sampled_from(["training", "pilot", "setup"]), max_size=5),
)
def test_without_typed_figures_every_ended_runs_hour_counts_exactly_once(
    runs: list[tuple[int | None, str, Decimal]], kinds: list[str]
) -> None:
    stages = [StageRow(n, (n % 2) + 1, kind) for n, kind in enumerate(kinds)]
    rows = [RunRow(item, kind, "completed", h) for item, kind, h in runs]
    assert reconcile(stages, rows).total == sum((h for _, _, h in runs), Decimal(0))
