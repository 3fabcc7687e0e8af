"""The pure forecast (estimates.domain.forecast), without a database: inputs are built by hand
(docs/domain.md §10)."""

from __future__ import annotations

from decimal import Decimal
from unittest import TestCase

from hypothesis import given, settings
from hypothesis import strategies as st

from campaigns.domain.observed_hours import RunRow as RunInput
from campaigns.domain.timeline import ItemPlan, StagePlan, TimelineInputs
from estimates.domain import calibration
from estimates.domain.forecast import compute
from estimates.domain.forecast_inputs import ForecastInputs, ItemInput, PilotInput


def _item(pk: int = 1, hours: str = "10", **kw: object) -> ItemInput:
    fields: dict[str, object] = {
        "id": pk,
        "name": f"item {pk}",
        "tier": "mandatory",
        "role": "baseline",
        "status": "planned",
        "gpu": "",
        "planned_hours": Decimal(hours),
        "prep_hours": Decimal("0"),
        "config": {},
    }
    fields.update(kw)
    return ItemInput(**fields)  # type: ignore[arg-type]


def _stage(pk: int, item: int | None, hours: str, **kw: object) -> StagePlan:
    fields: dict[str, object] = {
        "id": pk,
        "name": f"stage {pk}",
        "kind": "training",
        "machine": True,
        "resource": "gpu-a",
        "planned_hours": Decimal(hours),
        "variant_id": item,
        "depends_on": (),
    }
    fields.update(kw)
    return StagePlan(**fields)  # type: ignore[arg-type]


def _plan(item: ItemInput, reserved: dict[int, Decimal] | None) -> ItemPlan:
    return ItemPlan(
        id=item.id,
        name=item.name,
        tier=item.tier,
        status=item.status,
        planned_hours=item.planned_hours,
        prep_hours=item.prep_hours,
        reserved_hours=item.planned_hours if reserved is None else reserved.get(item.id),
    )


def _inputs(
    *,
    items: tuple[ItemInput, ...] | None = None,
    stages: tuple[StagePlan, ...] = (),
    runs: tuple[RunInput, ...] = (),
    window_hours: float = 48.0,
    baseline: tuple[ItemPlan, ...] | None = None,
    **kw: object,
) -> ForecastInputs:
    """The forecast's inputs; `baseline`: the committed items (a committed plan)."""
    items = items if items is not None else (_item(),)
    reserved = None if baseline is None else {b.id: b.planned_hours for b in baseline}
    timeline = TimelineInputs(
        window_hours=Decimal(str(window_hours)),
        stages=stages,
        items=tuple(_plan(i, reserved) for i in items),
        runs=runs,
        committed_stages=None if baseline is None else stages,
        committed_items=baseline,
    )
    fields: dict[str, object] = {
        "campaign_id": 1,
        "currency": "EUR",
        "budget": None,
        "items": items,
        "timeline": timeline,
    }
    fields.update(kw)
    return ForecastInputs(**fields)  # type: ignore[arg-type]


def _pilot(tps: float | None = None, gpus: int = 1) -> PilotInput:
    return PilotInput(
        sample_id=7, run_id="pilot-1", tokens_per_second=tps, samples_per_second=None, gpus=gpus
    )


class PureForecast(TestCase):
    def test_without_a_pilot_the_planned_hours_are_assumed(self) -> None:
        result = compute(_inputs())
        (item,) = result.items
        self.assertEqual((item.forecast_hours, item.time_source), (10.0, "assumed"))
        self.assertEqual(result.forecast_hours, 10.0)
        self.assertTrue(result.fits_in_window)
        self.assertIn("No pilot throughput yet", " ".join(result.advice))

    def test_a_pilot_measuring_the_stated_work_replaces_the_planned_hours(self) -> None:
        # 3.6M tokens at 100 tokens/s on 1 GPU: 10 h; on 2 GPUs: 5 h.
        item = _item(config={"tokens": 3_600_000, "gpus": 2})
        result = compute(_inputs(items=(item,), pilots={1: _pilot(100.0)}))
        self.assertEqual(result.items[0].time_source, "pilot")
        self.assertAlmostEqual(result.items[0].forecast_hours, 5.0)
        self.assertEqual(result.time_source, "pilot")
        self.assertEqual(result.inputs["pilot_samples"], {"1": 7})

    def test_an_assumed_throughput_is_rescaled_by_the_measurement(self) -> None:
        item = _item(config={"assumed_tokens_per_second": 200.0})
        result = compute(_inputs(items=(item,), pilots={1: _pilot(100.0)}))
        self.assertAlmostEqual(result.items[0].forecast_hours, 20.0)

    def test_a_pilot_without_work_or_assumption_keeps_the_plan_and_says_so(self) -> None:
        result = compute(_inputs(pilots={1: _pilot(100.0)}))
        self.assertEqual(result.items[0].time_source, "assumed")
        self.assertIn("the planned 10 h are kept", result.items[0].note)

    def test_a_finished_run_replaces_everything(self) -> None:
        runs = (RunInput(variant_id=1, kind="full", status="completed", observed_hours=Decimal(4)),)
        result = compute(_inputs(runs=runs, pilots={1: _pilot(1.0)}))
        self.assertEqual(
            (result.items[0].forecast_hours, result.items[0].time_source), (4.0, "observed")
        )
        self.assertEqual(result.observed_hours, 4.0)

    def test_cut_items_forecast_nothing_and_their_stages_drop_out(self) -> None:
        items = (_item(1, status="cut"), _item(2))
        stages = (_stage(1, 1, "10"), _stage(2, 2, "10", resource="gpu-b"))
        result = compute(_inputs(items=items, stages=stages))
        self.assertEqual(result.items[0].forecast_hours, 0.0)
        self.assertEqual(result.forecast_hours, 10.0)
        self.assertEqual(result.reserved_hours, 10.0)

    def test_stages_scale_with_the_pilot_training_only(self) -> None:
        item = _item(config={"tokens": 7_200_000})  # 20 h at 100 tokens/s
        stages = (
            _stage(1, 1, "10"),
            _stage(2, 1, "2", kind="validation", depends_on=(1,), name="val"),
        )
        result = compute(_inputs(items=(item,), stages=stages, pilots={1: _pilot(100.0)}))
        # Training 10 h -> 20 h; validation stays 2 h; in sequence.
        self.assertAlmostEqual(result.forecast_hours, 22.0)
        self.assertAlmostEqual(result.reserved_hours, 12.0)
        self.assertEqual(result.critical_path, ("stage 1", "val"))

    def test_a_committed_plan_reserves_the_baseline_and_flags_added_items(self) -> None:
        baseline = (ItemPlan(id=1, name="item 1", planned_hours=Decimal(8)),)
        result = compute(
            _inputs(items=(_item(1), _item(2)), baseline=baseline, baseline_digest="abc")
        )
        self.assertTrue(result.committed)
        self.assertEqual(result.items[0].reserved_hours, 8.0)
        self.assertIsNone(result.items[1].reserved_hours)
        self.assertEqual(result.reserved_hours, 8.0)
        self.assertIn("Added after commit", " ".join(result.advice))
        self.assertEqual(result.inputs["baseline_digest"], "abc")

    def test_over_the_window_says_by_how_much(self) -> None:
        result = compute(_inputs(window_hours=6.0))
        self.assertFalse(result.fits_in_window)
        self.assertTrue(
            result.advice[0].startswith("The calendar takes 10 h of a 6 h window: 4 h over")
        )
        self.assertEqual(result.as_json()["over_hours"], 4.0)

    def test_the_team_calibration_scales_an_item_without_pilot(self) -> None:
        found = calibration.Calibration(
            kind="training", gpu="", ratios=(1.0, 1.5, 2.0), sources=((9, "earlier"),)
        )
        result = compute(_inputs(calibrations=(found,)))
        self.assertEqual(result.items[0].time_source, "calibrated")
        self.assertAlmostEqual(result.items[0].forecast_hours, 15.0)
        self.assertEqual(result.calibration[0]["median_ratio"], 1.5)

    def test_no_rental_plan_in_the_currency_gives_no_lot_advice(self) -> None:
        result = compute(_inputs())
        self.assertIn("No rental plan is listed in EUR: no lot advice.", result.advice)
        self.assertEqual(result.lots["advised"], [])


hours = st.decimals(min_value=0, max_value=10_000, places=2, allow_nan=False)
rates = st.floats(min_value=0.01, max_value=1e7, allow_nan=False, allow_infinity=False)


@settings(max_examples=60, deadline=None)
@given(
    planned=st.lists(hours, min_size=1, max_size=5),
    rate=st.one_of(st.none(), rates),
    tokens=st.integers(min_value=1, max_value=10**12),
    observed=st.one_of(st.none(), hours),
)
def test_forecast_hours_are_never_negative(
    planned: list[Decimal], rate: float | None, tokens: int, observed: Decimal | None
) -> None:
    items = tuple(_item(i + 1, str(p), config={"tokens": tokens}) for i, p in enumerate(planned))
    stages = tuple(_stage(i + 1, i + 1, str(p), name=f"s{i}") for i, p in enumerate(planned))
    runs = (RunInput(1, "full", "completed", observed),)
    pilots = {1: _pilot(rate)} if rate else {}
    for with_stages in ((), stages):
        result = compute(_inputs(items=items, stages=with_stages, runs=runs, pilots=pilots))
        assert result.forecast_hours >= 0
        assert result.reserved_hours >= 0
        assert result.observed_hours >= 0
        assert all(i.forecast_hours >= 0 for i in result.items)


@settings(max_examples=60, deadline=None)
@given(planned=hours, assumed=rates, measured=rates, gpus=st.integers(1, 64))
def test_a_measured_pilot_replaces_the_assumed_throughput(
    planned: Decimal, assumed: float, measured: float, gpus: int
) -> None:
    """Forecast = planned x assumed / measured: the pilot, not the assumption, sets the time."""
    item = _item(hours=str(planned), config={"assumed_tokens_per_second": assumed})
    result = compute(_inputs(items=(item,), pilots={1: _pilot(measured, gpus)}))
    forecast = result.items[0]
    assert forecast.time_source == "pilot"
    expected = float(planned) * assumed / measured
    assert abs(forecast.forecast_hours - expected) <= 1e-9 * max(1.0, expected)
