"""The one timeline (docs/domain.md §7.7): the seed's 48 h of a 72 h window, its 30 h slip to
78 h, cuts that count only what ran, observed hours counted once, and properties over random
plans. Pure: no database."""

from __future__ import annotations

import itertools
from decimal import Decimal

from hypothesis import given, settings
from hypothesis import strategies as st

from campaigns.domain.observed_hours import RunRow
from campaigns.domain.timeline import (
    CUT,
    DONE,
    PLANNED,
    RUNNING,
    ItemPlan,
    LotPlan,
    StagePlan,
    TimelineInputs,
    build,
)

D = Decimal


def seed_plan() -> tuple[tuple[StagePlan, ...], tuple[ItemPlan, ...]]:
    """Setup 3 h, loading 5 h, baseline 12 h, two LoRA variants 12 h each, retrieval 4 h:
    48 sequential machine hours on one RTX 4090."""
    items = (
        ItemPlan(id=1, name="Baseline", planned_hours=D(12), reserved_hours=D(12)),
        ItemPlan(id=2, name="LoRA r8", planned_hours=D(12), reserved_hours=D(12), tier="useful"),
        ItemPlan(
            id=3, name="LoRA r16", planned_hours=D(12), reserved_hours=D(12), tier="exploratory"
        ),
    )
    stages = (
        StagePlan(
            id=10, name="Setup", kind="setup", machine=True, resource="4090", planned_hours=D(3)
        ),
        StagePlan(
            id=11,
            name="Loading",
            kind="loading",
            machine=True,
            resource="4090",
            planned_hours=D(5),
            depends_on=(10,),
        ),
        StagePlan(
            id=12,
            name="Baseline",
            kind="training",
            machine=True,
            resource="4090",
            planned_hours=D(12),
            variant_id=1,
            depends_on=(11,),
        ),
        StagePlan(
            id=13,
            name="LoRA r8",
            kind="training",
            machine=True,
            resource="4090",
            planned_hours=D(12),
            variant_id=2,
            depends_on=(11,),
        ),
        StagePlan(
            id=14,
            name="LoRA r16",
            kind="training",
            machine=True,
            resource="4090",
            planned_hours=D(12),
            variant_id=3,
            depends_on=(11,),
        ),
        StagePlan(
            id=15,
            name="Retrieval",
            kind="retrieval",
            machine=True,
            resource="4090",
            planned_hours=D(4),
            depends_on=(12, 13, 14),
        ),
    )
    return stages, items


LOT = LotPlan(label="RTX 4090, 3 days", gpu="RTX-4090", hours=72.0)


def inputs(stages, items, runs=(), committed=True, lots=(LOT,)) -> TimelineInputs:  # type: ignore[no-untyped-def]
    return TimelineInputs(
        window_hours=D(72),
        stages=tuple(stages),
        items=tuple(items),
        runs=tuple(runs),
        lots=lots,
        committed_stages=seed_plan()[0] if committed else None,
        committed_items=seed_plan()[1] if committed else None,
    )


def typed(stage: StagePlan, hours: str) -> StagePlan:
    return StagePlan(**{**stage.__dict__, "typed_hours": D(hours)})


def test_the_seed_plan_takes_48_hours_of_a_72_hour_window_leaving_24():
    stages, items = seed_plan()
    timeline = build(inputs(stages, items))
    assert timeline.planned_hours == 48
    assert timeline.hours == 48
    assert timeline.slack_hours == 24
    assert timeline.hours_to_buy == 0
    assert all(s.state == PLANNED for s in timeline.stages)
    assert timeline.critical_path[0] == "Setup" and timeline.critical_path[-1] == "Retrieval"


def test_a_30_hour_slip_in_setup_and_loading_reaches_78_hours_6_over_and_moves_every_later_stage():
    stages, items = seed_plan()
    slipped = (typed(stages[0], "18"), typed(stages[1], "20"), *stages[2:])
    timeline = build(inputs(slipped, items))
    assert timeline.planned_hours == 48
    assert timeline.hours == 78
    assert timeline.over_hours == 6
    assert timeline.hours_to_buy == 6
    baseline = timeline.stage(12)
    assert (baseline.planned_start, baseline.start) == (8, 38)
    assert [timeline.stage(10).state, timeline.stage(11).state] == [DONE, DONE]
    assert timeline.observed_hours == D(38)


def test_a_cut_stage_counts_only_what_ran_before_the_cut():
    stages, items = seed_plan()
    cut_items = (*items[:2], ItemPlan(**{**items[2].__dict__, "status": "cut"}))
    runs = (RunRow(3, "full", "stopped", D("2.5")),)
    timeline = build(inputs(stages, cut_items, runs))
    cut = timeline.stage(14)
    assert (cut.state, cut.hours, cut.planned_hours) == (CUT, 2.5, 12)
    assert timeline.hours == 38.5
    assert timeline.observed_hours == D("2.5")


def test_a_campaign_wide_pilot_stage_holds_the_pilot_runs_so_typed_hours_are_not_counted_twice():
    stages, items = seed_plan()
    pilot = StagePlan(
        id=9,
        name="Pilot",
        kind="pilot",
        machine=True,
        resource="4090",
        planned_hours=D(3),
        typed_hours=D(3),
        typed_reason="cluster clock",
    )
    runs = (RunRow(2, "pilot", "completed", D("0.38")), RunRow(3, "pilot", "completed", D("0.38")))
    timeline = build(inputs((pilot, *stages), items, runs, committed=False))
    seen = timeline.stage(9).observed
    assert (seen.hours, seen.runs_hours, seen.runs) == (D(3), D("0.76"), 2)
    assert timeline.observed_hours == D(3)
    assert timeline.observed.unattributed_hours == 0


def test_a_running_stage_lasts_at_least_what_its_run_took_so_far():
    stages, items = seed_plan()
    runs = (RunRow(1, "full", "running", None, running_hours=D(20)),)
    line = build(inputs(stages, items, runs)).stage(12)
    assert (line.state, line.hours) == (RUNNING, 20)


def test_an_items_forecast_rescales_its_training_stage_only():
    stages, items = seed_plan()
    forecast = (ItemPlan(**{**items[0].__dict__, "forecast_hours": 18.0}), *items[1:])
    timeline = build(inputs(stages, forecast))
    assert (timeline.stage(12).hours, timeline.stage(12).basis) == (18, "forecast")
    assert timeline.hours == 54


def test_without_stages_the_items_run_one_after_another_after_their_preparation():
    items = (
        ItemPlan(id=1, name="A", planned_hours=D(10), prep_hours=D(2), reserved_hours=D(10)),
        ItemPlan(id=2, name="B", planned_hours=D(5), reserved_hours=D(5)),
    )
    timeline = build(TimelineInputs(window_hours=D(72), stages=(), items=items))
    assert timeline.hours == 17
    assert timeline.figures.calendar_hours == D(17)
    assert timeline.figures.work_hours == D(15)


def test_items_without_a_stage_are_named():
    stages, items = seed_plan()
    extra = (*items, ItemPlan(id=4, name="Data check", planned_hours=D(1), reserved_hours=None))
    assert build(inputs(stages, extra)).items_without_stage == ("Data check",)


def test_a_dependency_cycle_is_said_and_the_stages_counted_one_after_another():
    a = StagePlan(
        id=1,
        name="a",
        kind="setup",
        machine=True,
        resource="g",
        planned_hours=D(1),
        depends_on=(2,),
    )
    b = StagePlan(
        id=2,
        name="b",
        kind="setup",
        machine=True,
        resource="g",
        planned_hours=D(2),
        depends_on=(1,),
    )
    timeline = build(TimelineInputs(window_hours=D(10), stages=(a, b), items=()))
    assert "cycle" in timeline.problem
    assert timeline.hours == 3


# --------------------------------------------------------------------------- properties

hours = st.decimals(min_value=0, max_value=50, places=2)


@st.composite
def plans(draw):  # type: ignore[no-untyped-def]
    n = draw(st.integers(min_value=1, max_value=8))
    stages = []
    for i in range(1, n + 1):
        deps: tuple[int, ...] = ()
        if i > 1:
            deps = tuple(sorted(draw(st.sets(st.integers(1, i - 1), max_size=2))))
        machine = draw(st.booleans())
        stages.append(
            StagePlan(
                id=i,
                name=f"s{i}",
                kind=draw(st.sampled_from(["setup", "training", "pilot", "analysis"])),
                machine=machine,
                resource=draw(st.sampled_from(["g1", "g2"])) if machine else "",
                planned_hours=draw(hours),
                variant_id=draw(st.sampled_from([None, 1, 2])),
                depends_on=deps,
                typed_hours=draw(st.one_of(st.none(), hours)),
            )
        )
    items = tuple(
        ItemPlan(
            id=i,
            name=f"i{i}",
            planned_hours=draw(hours),
            reserved_hours=draw(hours),
            status=draw(st.sampled_from(["planned", "cut"])),
            forecast_hours=draw(st.one_of(st.none(), st.floats(0, 60))),
        )
        for i in (1, 2)
    )
    runs = tuple(
        RunRow(
            draw(st.sampled_from([None, 1, 2])),
            draw(st.sampled_from(["full", "pilot"])),
            draw(st.sampled_from(["completed", "failed", "running"])),
            draw(hours),
            running_hours=draw(hours),
        )
        for _ in range(draw(st.integers(min_value=0, max_value=5)))
    )
    return TimelineInputs(window_hours=D(72), stages=tuple(stages), items=items, runs=runs)


@settings(max_examples=60, deadline=None)
@given(plans())
def test_every_stage_keeps_its_dependencies_and_one_gpu_runs_one_stage_at_a_time(plan):
    timeline = build(plan)
    by_id = {s.id: s for s in timeline.stages}
    for stage in plan.stages:
        line = by_id[stage.id]
        assert line.end >= line.start >= 0 and line.hours >= 0
        for dep in stage.depends_on:
            assert line.start >= by_id[dep].end - 1e-9
    # A stage of no length occupies no time: it may sit at the instant another begins.
    machine = sorted(
        (s for s in timeline.stages if s.machine and s.end > s.start),
        key=lambda s: (s.start, s.end),
    )
    for resource in {s.resource for s in machine}:
        on = [s for s in machine if s.resource == resource]
        for a, b in itertools.pairwise(on):
            assert b.start >= a.end - 1e-9
    assert timeline.hours == max((s.end for s in timeline.stages), default=0.0)


@settings(max_examples=60, deadline=None)
@given(plans())
def test_every_ended_run_and_typed_figure_is_counted_once_in_the_observed_total(plan):
    timeline = build(plan)
    stage_figures = sum(
        (s.observed.hours for s in timeline.stages if s.observed.hours is not None), D(0)
    )
    assert timeline.observed.total == stage_figures + timeline.observed.unattributed_hours
    done = [s for s in timeline.stages if s.state == DONE]
    assert all(s.hours == float(s.observed.hours) for s in done)  # type: ignore[arg-type]


@settings(max_examples=40, deadline=None)
@given(plans())
def test_with_nothing_observed_and_nothing_forecast_the_current_calendar_is_the_committed_one(
    plan,
):
    bare = TimelineInputs(
        window_hours=plan.window_hours,
        stages=tuple(StagePlan(**{**s.__dict__, "typed_hours": None}) for s in plan.stages),
        items=tuple(
            ItemPlan(**{**i.__dict__, "status": "planned", "forecast_hours": None})
            for i in plan.items
        ),
    )
    timeline = build(bare)
    assert timeline.hours == timeline.planned_hours
    assert all(s.start == s.planned_start and s.end == s.planned_end for s in timeline.stages)


def test_once_closed_the_calendar_is_what_ran():
    stages, items = seed_plan()
    slipped = (typed(stages[0], "18"), typed(stages[1], "20"), *stages[2:])
    runs = (RunRow(1, "full", "completed", D("13")),)
    closed = TimelineInputs(**{**inputs(slipped, items, runs).__dict__, "closed": True})
    timeline = build(closed)
    assert timeline.hours == 18 + 20 + 13
    assert timeline.observed_hours == D(51)
    assert {s.basis for s in timeline.stages if s.state == PLANNED} == {"not observed"}


def test_a_closed_campaigns_headline_gives_the_hours_it_took_and_no_lot_to_buy():
    from estimates.domain.forecast_advice import headline

    stages, items = seed_plan()
    slipped = (typed(stages[0], "18"), typed(stages[1], "20"), *stages[2:])
    runs = (RunRow(1, "full", "completed", D("40")),)
    lots = {"advised": [{"plan": "7-day lot"}], "advised_total": "110.00", "currency": "USD"}
    open_line = build(inputs(slipped, items, runs))
    closed_line = build(TimelineInputs(**{**inputs(slipped, items, runs).__dict__, "closed": True}))
    assert closed_line.closed and closed_line.hours > closed_line.window_hours
    assert "7-day lot" in headline(open_line, lots)
    assert headline(closed_line, lots) == (
        "The calendar takes 78 h of a 72 h window: 6 h over (planned 48 h)."
    )
