"""A stage's own forecast factor on the timeline (campaigns/domain/timeline_calendar.py): the
forecast scales a planned stage tied to no item by the team's calibration median (docs/domain.md
§20); an item's forecast, an observation or a cut still decides first. Pure: no database."""

from __future__ import annotations

from decimal import Decimal as D

from campaigns.domain.timeline import ItemPlan, StagePlan, TimelineInputs, build


def plan(setup_factor: float | None, train_factor: float | None, typed: str | None = None):  # type: ignore[no-untyped-def]
    setup = StagePlan(
        id=1,
        name="Setup",
        kind="setup",
        machine=True,
        resource="4090",
        planned_hours=D(2),
        factor=setup_factor,
        typed_hours=None if typed is None else D(typed),
    )
    train = StagePlan(
        id=2,
        name="Train",
        kind="training",
        machine=True,
        resource="4090",
        planned_hours=D(10),
        variant_id=7,
        depends_on=(1,),
        factor=train_factor,
    )
    item = ItemPlan(id=7, name="Baseline", planned_hours=D(10), forecast_hours=20.0)
    return TimelineInputs(window_hours=D(72), stages=(setup, train), items=(item,))


def test_an_untied_planned_stage_lasts_its_planned_hours_times_its_factor() -> None:
    line = build(plan(6.0, None))
    assert (line.stage(1).hours, line.stage(1).basis) == (12.0, "calibrated")
    assert line.stage(2).start == 12.0
    assert line.hours == 32.0  # 12 + the item's forecast of 20


def test_the_items_forecast_an_observation_and_no_factor_decide_first() -> None:
    line = build(plan(None, 3.0))
    assert (line.stage(2).hours, line.stage(2).basis) == (20.0, "forecast")
    assert build(plan(6.0, None, typed="5")).stage(1).hours == 5.0
    bare = build(plan(None, None))
    assert (bare.stage(1).hours, bare.stage(1).basis) == (2.0, "planned")


def test_the_committed_calendar_ignores_the_factor() -> None:
    line = build(plan(6.0, None))
    assert line.planned_hours == 12.0  # 2 + 10, as planned
    assert (line.stage(1).planned_hours, line.stage(1).hours) == (2.0, 12.0)
