"""The lessons a campaign leaves to the next plan (estimates/domain/next_plan.py, docs/domain.md
§21) and the observations its timeline gives the calibration (estimates/domain/calibration.py
`observations_of`, §20). Pure: no database."""

from __future__ import annotations

from decimal import Decimal as D

from hypothesis import given, settings
from hypothesis import strategies as st

from campaigns.domain.observed_hours import RunRow
from campaigns.domain.timeline import ItemPlan, StagePlan, TimelineInputs, build
from estimates.domain.calibration import Observation, calibrate, observations_of
from estimates.domain.next_plan import advice, item_key, lessons

GPU = "RTX-4090"


def obs(kind: str, planned: float, observed: float, campaign: int = 1) -> Observation:
    return Observation(kind, GPU, campaign, f"c{campaign}", planned, observed)


def test_this_campaigns_ratio_is_observed_over_committed_summed_per_kind() -> None:
    found = lessons(
        [("setup", GPU), ("training", GPU), ("retrieval", GPU)],
        [obs("setup", 2, 12), obs("training", 10, 20.9), obs("training", 10, 20.9)],
        [],
    )
    setup = found.lesson("setup", "rtx 4090")
    assert (setup.ratio, setup.source) == (D("6.00"), "this campaign")
    assert setup.words == "this campaign: setup took ×6.00 (12.00 h for 2.00 h)"
    training = found.lesson("training", GPU)
    assert (training.ratio, training.stages, training.observed_hours) == (D("2.09"), 2, D("41.8"))
    assert training.spread == {"min": 2.09, "max": 2.09, "p25": 2.09, "p75": 2.09}
    retrieval = found.lesson("retrieval", GPU)
    assert (retrieval.ratio, retrieval.source) == (None, "none")
    assert retrieval.apply(D("1.00")) == D("1.00")
    assert found.lesson("setup", GPU).apply(D("2.00")) == D("12.00")


def test_from_three_team_observations_the_team_median_wins() -> None:
    team = calibrate([obs("setup", 2, 2.4, 1), obs("setup", 2, 2.6, 2), obs("setup", 2, 12, 3)])
    setup = lessons([("setup", GPU)], [obs("setup", 2, 12, 3)], team).lesson("setup", GPU)
    assert (setup.ratio, setup.source, setup.count) == (D("1.3000"), "team", 3)
    assert setup.words == "team median ×1.30 of 3 setup stages in #1 c1, #2 c2, #3 c3"
    assert setup.spread["max"] == 6.0
    # Two observations are an anecdote: this campaign's own ratio stands.
    two = calibrate([obs("setup", 2, 2.4, 1), obs("setup", 2, 12, 3)])
    assert lessons([("setup", GPU)], [obs("setup", 2, 12, 3)], two).lesson("setup", GPU).source == (
        "this campaign"
    )


def test_observed_with_nothing_planned_asks_to_plan_it() -> None:
    found = lessons([("validation", GPU)], [obs("validation", 0, 3)], [])
    lesson = found.lesson("validation", GPU)
    assert lesson.ratio is None
    assert "with nothing planned: plan it" in lesson.words
    assert advice(found, unobserved=2) == [
        f"validation on {GPU}: {lesson.words}.",
        "2 stage(s) have no observed hours: record them to sharpen the estimate.",
    ]


def test_the_advice_says_what_the_next_plan_applies() -> None:
    found = lessons(
        [("setup", GPU), ("loading", GPU), ("outputs", GPU)],
        [obs("setup", 2, 12), obs("loading", 4, 2), obs("outputs", 1, 1.05)],
        [],
    )
    assert advice(found, 0) == [
        f"loading on {GPU}: this campaign: loading took ×0.50 (2.00 h for 4.00 h); the next "
        "plan shrinks the estimate to ×0.50.",
        f"setup on {GPU}: this campaign: setup took ×6.00 (12.00 h for 2.00 h); the next plan "
        "reserves ×6.00.",
        f"Within 10% of the plan (the next plan applies these all the same): outputs on {GPU} "
        "×1.05.",
    ]


def test_an_items_hours_take_the_lesson_of_the_stages_its_forecast_rescales() -> None:
    assert item_key([("validation", True, GPU), ("training", True, GPU)], "") == (
        "training",
        GPU,
    )
    assert item_key([("checkpoint_io", True, "B200")], GPU) == ("checkpoint_io", "B200")
    assert item_key([], GPU) == ("training", GPU)


# --------------------------------------------------------------------------- observations


def stage(id: int, kind: str, planned: str, **extra):  # type: ignore[no-untyped-def]
    return StagePlan(
        id=id,
        name=kind,
        kind=kind,
        machine=True,
        resource="rtx4090-a",
        planned_hours=D(planned),
        **extra,
    )


def test_the_timelines_done_stages_are_its_observations_cut_and_running_ones_are_not() -> None:
    stages = (
        stage(1, "setup", "2", typed_hours=D("12")),
        stage(2, "training", "10", variant_id=7),
        stage(3, "training", "10", variant_id=8),
        stage(4, "training", "10", variant_id=9),
        stage(5, "retrieval", "1"),
    )
    items = (
        ItemPlan(id=7, name="base", planned_hours=D(10)),
        ItemPlan(id=8, name="B", planned_hours=D(10), status="cut"),
        ItemPlan(id=9, name="C", planned_hours=D(10), gpu="B200"),
    )
    added = stage(6, "loading", "3", typed_hours=D("3"))
    timeline = build(
        TimelineInputs(
            window_hours=D(72),
            stages=(*stages, added),
            items=items,
            runs=(
                RunRow(7, "full", "completed", D("20.9")),
                RunRow(8, "full", "failed", D("0.5")),
                RunRow(9, "full", "running", None, running_hours=D(4)),
            ),
            committed_stages=stages,
            committed_items=items,
        )
    )
    found = observations_of(
        timeline,
        campaign_id=1,
        title="seed",
        item_gpus={7: "", 9: "B200"},
        known_gpus=[GPU, "B200"],
    )
    # Setup (tied to no item) and the baseline's training; not the cut B, the running C, the
    # unobserved retrieval, nor the loading added after commit (never committed: §8.3).
    assert [(o.kind, o.gpu, o.estimated_hours, o.observed_hours) for o in found] == [
        ("setup", GPU, 2.0, 12.0),
        ("training", GPU, 10.0, 20.9),
    ]


# --------------------------------------------------------------------------- the property

planned = st.decimals(min_value=D("0.25"), max_value=D("40"), places=2)
factor = st.decimals(min_value=D("0.1"), max_value=D("8"), places=2)


@settings(max_examples=80, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from(["setup", "loading", "training"]), planned, factor),
        min_size=1,
        max_size=12,
    )
)
def test_the_ratios_applied_to_the_committed_plan_give_back_its_observed_hours(rows) -> None:  # type: ignore[no-untyped-def]
    """Per kind: the committed hours × the kind's lesson sum to the observed hours, to the
    rounding of the ratio (half a hundredth per committed hour) and of each figure (half a
    hundredth of an hour each)."""
    observed = [
        obs(kind, float(hours), float((hours * f).quantize(D("0.01")))) for kind, hours, f in rows
    ]
    found = lessons([(o.kind, GPU) for o in observed], observed, [])
    for kind in {o.kind for o in observed}:
        mine = [o for o in observed if o.kind == kind]
        lesson = found.lesson(kind, GPU)
        assert lesson.source == "this campaign"
        applied = sum((lesson.apply(D(repr(o.estimated_hours))) for o in mine), D(0))
        took = sum((D(repr(o.observed_hours)) for o in mine), D(0))
        committed = sum((D(repr(o.estimated_hours)) for o in mine), D(0))
        assert abs(applied - took) <= committed * D("0.005") + D("0.005") * len(mine)
