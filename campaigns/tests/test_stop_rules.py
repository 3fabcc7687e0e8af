"""Stop-rule evaluation: pure tests, no database."""

import math
from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from campaigns.domain.stop_rules import (
    COMPARATORS,
    DEFAULT_REQUIRED_COMPONENTS,
    NO_GRACE,
    CheckpointFacts,
    Comparator,
    Firing,
    Grace,
    MetricPoint,
    StopRuleSpec,
    evaluate_budget,
    evaluate_checkpoint,
    evaluate_points,
    grace_problems,
    grace_seconds_left,
    grace_until_step,
    parse_metric_value,
    rule_problems,
    within_grace,
)

NAN_LOSS = StopRuleSpec(id=3, kind="non_finite_loss")
TRUNCATION = StopRuleSpec(id=4, kind="input_truncated")
RESUME = StopRuleSpec(id=5, kind="no_usable_resume")
BUDGET = StopRuleSpec(id=6, kind="budget_overrun")
CUSTOM = StopRuleSpec(id=7, kind="custom", description="stop if the GPU vendor recalls the lot")


def threshold_rule(comparator: Comparator, threshold: float, rule_id: int = 9) -> StopRuleSpec:
    return StopRuleSpec(
        id=rule_id,
        kind="metric_threshold",
        metric="accuracy",
        comparator=comparator,
        threshold=threshold,
    )


def complete_checkpoint(step: int = 100) -> CheckpointFacts:
    return CheckpointFacts(step=step, components=DEFAULT_REQUIRED_COMPONENTS, resume_verified=True)


# --- non-finite loss -----------------------------------------------------------------------


def test_it_fires_non_finite_loss_on_a_nan_loss_with_the_rule_and_a_plain_reason() -> None:
    points = [MetricPoint("loss", 110, 2.3), MetricPoint("loss", 120, math.nan)]

    firing = evaluate_points([NAN_LOSS], points)

    assert firing == Firing(
        rule_id=3,
        kind="non_finite_loss",
        reason="loss is NaN at step 120 (rule #3: non-finite loss)",
        step=120,
    )


@pytest.mark.parametrize(("value", "shown"), [(math.inf, "Infinity"), (-math.inf, "-Infinity")])
def test_it_fires_non_finite_loss_on_either_infinity(value: float, shown: str) -> None:
    firing = evaluate_points([NAN_LOSS], [MetricPoint("loss", 7, value)])

    assert firing is not None
    assert firing.reason == f"loss is {shown} at step 7 (rule #3: non-finite loss)"


def test_it_does_not_fire_non_finite_loss_on_finite_losses_or_other_metrics() -> None:
    points = [MetricPoint("loss", 1, 2.0), MetricPoint("grad_norm", 2, math.nan)]

    assert evaluate_points([NAN_LOSS], points) is None


def test_it_watches_the_named_metric_when_a_non_finite_rule_names_one() -> None:
    rule = StopRuleSpec(id=1, kind="non_finite_loss", metric="val_loss")
    points = [MetricPoint("loss", 1, math.nan), MetricPoint("val_loss", 2, math.inf)]

    firing = evaluate_points([rule], points)

    assert firing is not None and firing.step == 2
    assert firing.reason.startswith("val_loss is Infinity at step 2")


def test_it_appends_the_rule_description_to_the_reason() -> None:
    rule = StopRuleSpec(id=3, kind="non_finite_loss", description="divergence")

    firing = evaluate_points([rule], [MetricPoint("loss", 5, math.nan)])

    assert firing is not None
    assert firing.reason == "loss is NaN at step 5 (rule #3: non-finite loss; divergence)"


# --- metric thresholds ---------------------------------------------------------------------


@pytest.mark.parametrize("comparator", COMPARATORS)
def test_it_never_lets_nan_match_a_threshold(comparator: Comparator) -> None:
    rule = threshold_rule(comparator, 0.5)

    assert evaluate_points([rule], [MetricPoint("accuracy", 1, math.nan)]) is None


@pytest.mark.parametrize(
    ("comparator", "fires_at"),
    [
        ("lt", [0.4]),
        ("le", [0.4, 0.5]),
        ("gt", [0.6]),
        ("ge", [0.5, 0.6]),
    ],
)
def test_it_applies_each_comparator_to_finite_values(
    comparator: Comparator, fires_at: list[float]
) -> None:
    rule = threshold_rule(comparator, 0.5)

    fired = [v for v in (0.4, 0.5, 0.6) if evaluate_points([rule], [MetricPoint("accuracy", 1, v)])]

    assert fired == fires_at


@pytest.mark.parametrize(
    ("comparator", "fires_on_plus_inf", "fires_on_minus_inf"),
    [("lt", False, True), ("le", False, True), ("gt", True, False), ("ge", True, False)],
)
def test_it_compares_infinities_mathematically(
    comparator: Comparator, fires_on_plus_inf: bool, fires_on_minus_inf: bool
) -> None:
    rule = threshold_rule(comparator, 0.5)

    plus = evaluate_points([rule], [MetricPoint("accuracy", 1, math.inf)])
    minus = evaluate_points([rule], [MetricPoint("accuracy", 1, -math.inf)])

    assert (plus is not None) is fires_on_plus_inf
    assert (minus is not None) is fires_on_minus_inf


def test_it_words_a_threshold_firing_with_value_comparison_and_rule() -> None:
    firing = evaluate_points([threshold_rule("lt", 0.5)], [MetricPoint("accuracy", 500, 0.41)])

    assert firing is not None
    assert firing.kind == "metric_threshold"
    assert firing.reason == (
        "accuracy is 0.41 at step 500, below the threshold 0.5 (rule #9: metric threshold)"
    )


@given(
    comparator=st.sampled_from(COMPARATORS),
    threshold=st.floats(allow_nan=False, allow_infinity=False),
)
def test_it_never_fires_a_threshold_on_nan_whatever_the_threshold(
    comparator: Comparator, threshold: float
) -> None:
    rule = threshold_rule(comparator, threshold)

    assert evaluate_points([rule], [MetricPoint("accuracy", 0, math.nan)]) is None


@pytest.mark.parametrize(
    ("kind", "comparator", "threshold", "words"),
    [
        ("metric_threshold", None, 0.5, "needs a comparator"),
        ("metric_threshold", "lt", None, "needs a threshold"),
        ("metric_threshold", "lt", math.nan, "finite number"),
        ("metric_threshold", "eq", 0.5, "unknown comparator"),
        ("explode", None, None, "unknown rule kind"),
    ],
)
def test_it_refuses_an_unusable_rule_definition(
    kind: str, comparator: str | None, threshold: float | None, words: str
) -> None:
    assert any(words in p for p in rule_problems(kind, "accuracy", comparator, threshold))
    with pytest.raises(ValueError, match=words):
        StopRuleSpec(id=1, kind=kind, metric="accuracy", comparator=comparator, threshold=threshold)  # type: ignore[arg-type]


# --- truncated inputs ----------------------------------------------------------------------


@pytest.mark.parametrize("name", ["input_truncated", "truncated_inputs"])
def test_it_fires_input_truncated_on_a_positive_count_under_either_name(name: str) -> None:
    points = [MetricPoint(name, 10, 0.0), MetricPoint(name, 40, 3.0)]

    firing = evaluate_points([TRUNCATION], points)

    assert firing is not None
    assert firing.step == 40 and firing.rule_id == 4
    assert "essential inputs were truncated" in firing.reason


def test_it_does_not_fire_input_truncated_on_zero_or_nan() -> None:
    points = [MetricPoint("input_truncated", 1, 0.0), MetricPoint("input_truncated", 2, math.nan)]

    assert evaluate_points([TRUNCATION], points) is None


# --- ordering ------------------------------------------------------------------------------


def test_it_returns_the_first_firing_in_step_order_not_input_order() -> None:
    points = [
        MetricPoint("accuracy", 300, 0.1),
        MetricPoint("loss", 200, math.nan),
        MetricPoint("input_truncated", 250, 1.0),
    ]

    firing = evaluate_points([threshold_rule("lt", 0.5), TRUNCATION, NAN_LOSS], points)

    assert firing is not None
    assert (firing.rule_id, firing.step) == (3, 200)


def test_it_breaks_step_ties_by_input_order_of_the_points() -> None:
    points = [MetricPoint("input_truncated", 50, 2.0), MetricPoint("loss", 50, math.nan)]

    firing = evaluate_points([NAN_LOSS, TRUNCATION], points)

    assert firing is not None and firing.rule_id == TRUNCATION.id


def test_it_breaks_ties_at_one_point_by_rule_order() -> None:
    low = threshold_rule("lt", 0.5, rule_id=1)
    lower = threshold_rule("lt", 0.9, rule_id=2)

    firing = evaluate_points([lower, low], [MetricPoint("accuracy", 1, 0.1)])

    assert firing is not None and firing.rule_id == 2


def test_it_never_fires_custom_resume_or_budget_rules_on_metric_points() -> None:
    points = [MetricPoint("loss", 1, math.nan), MetricPoint("input_truncated", 2, 9.0)]

    assert evaluate_points([CUSTOM, RESUME, BUDGET], points) is None


@given(
    st.lists(
        st.tuples(st.integers(min_value=0, max_value=50), st.floats(allow_nan=True)),
        max_size=30,
    )
)
def test_it_fires_on_the_earliest_non_finite_loss_whatever_the_input_order(
    raw: list[tuple[int, float]],
) -> None:
    points = [MetricPoint("loss", step, value) for step, value in raw]
    bad_steps = [p.step for p in points if not math.isfinite(p.value)]

    firing = evaluate_points([NAN_LOSS], points)

    if bad_steps:
        assert firing is not None and firing.step == min(bad_steps)
    else:
        assert firing is None


# --- checkpoints ---------------------------------------------------------------------------


def test_it_fires_no_usable_resume_when_the_optimizer_is_missing_and_names_it() -> None:
    checkpoint = CheckpointFacts(
        step=100, components=frozenset({"model", "progress"}), resume_verified=True
    )

    firing = evaluate_checkpoint([NAN_LOSS, RESUME], checkpoint)

    assert firing is not None
    assert (firing.rule_id, firing.kind, firing.step) == (5, "no_usable_resume", 100)
    assert firing.reason == (
        "checkpoint at step 100 is not a usable resume: missing optimizer "
        "(rule #5: no usable resume)"
    )


def test_it_fires_no_usable_resume_when_the_checkpoint_is_behind_the_logged_steps() -> None:
    firing = evaluate_checkpoint(
        [RESUME], complete_checkpoint(step=100), DEFAULT_REQUIRED_COMPONENTS, last_logged_step=250
    )

    assert firing is not None
    assert "step 100 is behind step 250 already logged" in firing.reason


def test_it_fires_no_usable_resume_when_the_reload_was_not_verified() -> None:
    checkpoint = CheckpointFacts(
        step=10, components=DEFAULT_REQUIRED_COMPONENTS, resume_verified=False
    )

    firing = evaluate_checkpoint([RESUME], checkpoint)

    assert firing is not None
    assert "not verified by a reload in a new process" in firing.reason


def test_it_accepts_a_complete_verified_checkpoint_at_or_past_the_logged_step() -> None:
    assert evaluate_checkpoint([RESUME], complete_checkpoint(100), last_logged_step=100) is None
    assert evaluate_checkpoint([RESUME], complete_checkpoint(100), last_logged_step=None) is None


def test_it_honours_the_components_a_campaign_requires_beyond_the_default() -> None:
    required = DEFAULT_REQUIRED_COMPONENTS | {"scheduler", "rng"}

    firing = evaluate_checkpoint([RESUME], complete_checkpoint(), required)

    assert firing is not None
    assert "missing scheduler, rng" in firing.reason


def test_it_ignores_checkpoints_when_no_resume_rule_was_registered() -> None:
    checkpoint = CheckpointFacts(step=1, components=frozenset(), resume_verified=False)

    assert evaluate_checkpoint([NAN_LOSS, CUSTOM], checkpoint) is None


def test_it_refuses_components_outside_the_vocabulary() -> None:
    with pytest.raises(ValueError, match="optimiser"):
        CheckpointFacts(step=1, components=frozenset({"optimiser"}), resume_verified=True)


# --- budget --------------------------------------------------------------------------------


def test_it_fires_budget_overrun_when_observed_hours_exceed_the_reservation() -> None:
    firing = evaluate_budget([BUDGET], 78, 72, None, None)

    assert firing is not None
    assert firing.step is None
    assert firing.reason == (
        "observed 78 h exceed the 72 h reserved by 6 h (rule #6: budget or time overrun)"
    )


def test_it_fires_budget_overrun_when_spend_exceeds_the_budget() -> None:
    firing = evaluate_budget([BUDGET], 10, 48, Decimal("94.28"), Decimal("47.14"))

    assert firing is not None
    assert "spent 94.28 exceeds the budget 47.14 by 47.14" in firing.reason


def test_it_does_not_fire_budget_overrun_within_the_plan_or_exactly_on_it() -> None:
    assert evaluate_budget([BUDGET], 48, 48, Decimal("47.14"), Decimal("47.14")) is None
    assert evaluate_budget([BUDGET], None, 48, None, Decimal("47.14")) is None


def test_it_never_fires_custom_rules_automatically() -> None:
    huge = Decimal("1000000")
    checkpoint = CheckpointFacts(step=0, components=frozenset(), resume_verified=False)

    assert evaluate_budget([CUSTOM], 1000.0, 1.0, huge, Decimal("1")) is None
    assert evaluate_checkpoint([CUSTOM], checkpoint) is None
    assert evaluate_points([CUSTOM], [MetricPoint("loss", 0, math.nan)]) is None


# --- parsing metric values -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (2, 2.0),
        (2.31, 2.31),
        (math.inf, math.inf),
        ("Infinity", math.inf),
        ("+Infinity", math.inf),
        ("-Infinity", -math.inf),
        ("inf", math.inf),
        ("-INF", -math.inf),
        (Decimal("0.5"), 0.5),
    ],
)
def test_it_parses_numbers_and_the_infinity_tokens(raw: object, expected: float) -> None:
    assert parse_metric_value(raw) == expected


@pytest.mark.parametrize("raw", ["NaN", "nan", "NAN", math.nan])
def test_it_parses_nan_in_any_case(raw: object) -> None:
    assert math.isnan(parse_metric_value(raw))


@pytest.mark.parametrize("raw", [True, False, None, "2.31", "", "infinite", [1.0], {"v": 1}])
def test_it_rejects_bools_none_and_other_strings(raw: object) -> None:
    with pytest.raises(ValueError):
        parse_metric_value(raw)


def test_it_rejects_an_integer_too_large_for_a_float() -> None:
    with pytest.raises(ValueError, match="too large"):
        parse_metric_value(10**400)


# --- grace (docs/domain.md §4.6) -------------------------------------------------------------


def test_a_rule_without_grace_takes_nothing_after_its_stop() -> None:
    assert not within_grace(NO_GRACE, stop_step=20, last_step=20, seconds_since_stop=0.0)


def test_a_step_grace_takes_points_up_to_that_many_steps_after_the_firing_step() -> None:
    grace = Grace(steps=5)
    assert grace_until_step(grace, 20) == 25
    assert within_grace(grace, stop_step=20, last_step=25, seconds_since_stop=9e9)
    assert not within_grace(grace, stop_step=20, last_step=26, seconds_since_stop=0.0)


def test_a_minute_grace_takes_any_step_until_its_minutes_are_over() -> None:
    grace = Grace(minutes=2)
    assert within_grace(grace, stop_step=20, last_step=10_000, seconds_since_stop=119.0)
    assert not within_grace(grace, stop_step=20, last_step=21, seconds_since_stop=120.0)
    assert grace_seconds_left(grace, 100.0) == 20.0
    assert grace_seconds_left(grace, 500.0) == 0.0


def test_with_both_limits_the_grace_closes_at_the_first_one_reached() -> None:
    grace = Grace(steps=5, minutes=1)
    assert not within_grace(grace, stop_step=20, last_step=22, seconds_since_stop=61.0)
    assert not within_grace(grace, stop_step=20, last_step=26, seconds_since_stop=1.0)
    assert within_grace(grace, stop_step=20, last_step=22, seconds_since_stop=1.0)


def test_a_firing_carries_the_grace_its_rule_states() -> None:
    rule = StopRuleSpec(id=3, kind="non_finite_loss", grace=Grace(steps=50))
    firing = evaluate_points([rule], [MetricPoint("loss", 7, math.nan)])
    assert firing is not None and firing.grace == Grace(steps=50)


@pytest.mark.parametrize(
    ("steps", "minutes", "field"),
    [
        (-1, 0, "grace_steps"),
        (0, -1, "grace_minutes"),
        (True, 0, "grace_steps"),
        (0, 7 * 24 * 60 + 1, "grace_minutes"),
        (1.5, 0, "grace_steps"),
    ],
)
def test_it_refuses_a_grace_out_of_bounds_naming_the_field(
    steps: object, minutes: object, field: str
) -> None:
    problems = grace_problems(steps, minutes)
    assert len(problems) == 1 and problems[0].startswith(field)
    with pytest.raises(ValueError, match=field):
        StopRuleSpec(id=1, kind="custom", description="x", grace=Grace(steps, minutes))  # type: ignore[arg-type]


@given(
    st.integers(0, 1000),
    st.integers(0, 1000),
    st.integers(0, 100),
    st.integers(0, 2000),
    st.floats(0, 1e5),
)
def test_a_grace_never_takes_a_step_beyond_its_steps_nor_a_write_past_its_minutes(
    stop: int, steps: int, minutes: int, step: int, since: float
) -> None:
    grace = Grace(steps=steps, minutes=minutes)
    taken = within_grace(grace, stop_step=stop, last_step=step, seconds_since_stop=since)
    if taken:
        assert grace.given
        assert not steps or step <= stop + steps
        assert not minutes or since < minutes * 60
