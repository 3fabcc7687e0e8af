"""Input ranges, guarded money and unknown fields of the estimates API (no 500 for any input).

The ranges are ``estimates.domain.formulas.LIMITS`` (docs/api.md); the schema states them as
minimum/maximum, a value outside them is a 400 naming the field, and an overflow deep in a
computation is a 400 naming the input that caused it.
"""

from __future__ import annotations

import copy
import json
from decimal import Decimal
from typing import Any

import pytest
from django.test import TestCase
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.django import TestCase as HypothesisTestCase

from campaigns.models import Team
from campaigns.tests.factories import make_user, token_header
from catalog.services import seed_catalog
from estimates.domain.formulas import LIMITS, AmountOverflowError, break_even_months, hourly_cost
from estimates.tests.support import API_EXAMPLE, FUZZ, OPTIONS, AsPlanner

# Every numeric input of the preview body that lives directly in one of its sections, with its
# documented range: the edge is accepted (no 500) and just beyond it refused, naming the field.
# (The nested custom hardware, LoRA and interruption fields are checked in their own tests.)
PREVIEW_SECTIONS = ("model", "training", "hardware", "pilot", "overheads", "energy", "reliability")
RANGE_EDGES = sorted(
    tuple(dotted.split("."))
    for dotted in LIMITS
    if dotted.count(".") == 1 and dotted.split(".")[0] in PREVIEW_SECTIONS
)
# The sections the example body lacks, completed so that only the field under test is off.
COMPLETE_SECTIONS: dict[str, dict[str, Any]] = {
    "energy": {"pue": 1.1, "grid_kg_co2_per_kwh": 0.4},
    "reliability": {"checkpoint_write_seconds": 30, "mtbf_hours": 100},
}


def body_with(**sections: dict[str, Any]) -> dict[str, Any]:
    body = copy.deepcopy(API_EXAMPLE)
    for name, changes in sections.items():
        body[name] = {**body.get(name, {}), **changes}
    return body


class LimitTests(AsPlanner, TestCase):
    def assert_refused(self, body: Any, section: str, field: str) -> str:
        answer = self.post(body)
        self.assertEqual(answer.status_code, 400, answer.content)
        errors = answer.json()
        self.assertEqual(list(errors), [section], errors)
        self.assertEqual(list(errors[section]), [field], errors)
        message: str = errors[section][field][0]
        return message

    def test_parameters_1e21_with_tokens_1e22_and_a_rate_are_a_400_naming_the_parameters(
        self,
    ) -> None:
        # Issue 10 item 2: this answered 500 (decimal.InvalidOperation in formulas._cents).
        body = body_with(model={"parameters": 1e21}, training={"tokens": 1e22})
        answer = self.post(body)
        self.assertEqual(answer.status_code, 400, answer.content)
        errors = answer.json()
        self.assertIn("parameters", errors["model"])
        self.assertIn("tokens", errors["training"])
        self.assertNotIn("flops", errors)

    def test_parameters_1e30_are_refused_instead_of_answering_1e25_gpu_hours(self) -> None:
        message = self.assert_refused(body_with(model={"parameters": 1e30}), "model", "parameters")
        self.assertIn("less than or equal to", message)

    def test_every_range_edge_is_accepted_and_just_beyond_it_refused(self) -> None:
        self.assertGreaterEqual(len(RANGE_EDGES), 40)
        for section, field in RANGE_EDGES:
            low, high = LIMITS[f"{section}.{field}"]
            below = low / 2 if low > 0 else low - 1
            base = {section: COMPLETE_SECTIONS.get(section, {})}
            with self.subTest(field=f"{section}.{field}"):
                at_top = self.post(body_with(**{section: {**base[section], field: high}}))
                self.assertNotEqual(at_top.status_code, 500, at_top.content)
                for beyond in (high * 1.01 + 1, below):
                    body = body_with(**{section: {**base[section], field: beyond}})
                    self.assert_refused(body, section, field)

    def test_a_huge_integer_is_a_400_naming_it(self) -> None:
        raw = json.dumps(API_EXAMPLE).replace('"hidden_size": 4096', '"hidden_size": 1' + "0" * 30)
        answer = self.post(raw)
        self.assertEqual(answer.status_code, 400, answer.content)
        self.assertIn("hidden_size", answer.json().get("model", {}), answer.content)

    def test_a_cost_beyond_the_largest_amount_names_the_hourly_rate_not_an_internal_field(
        self,
    ) -> None:
        # Every input in range; 6e37 FLOPs at 0.1% of a T4 is ~2.6e26 GPU-hours, which at any
        # rate is beyond 1e15: quantizing it to cents used to raise decimal.InvalidOperation.
        body = body_with(
            model={"parameters": 1e15},
            training={"tokens": 1e18, "epochs": 1e4, "precision": "fp16"},
            hardware={"gpu": "T4", "utilization": 0.001, "count": 1},
            cost={"hourly_rate_per_gpu": "99999999.0000"},
        )
        body.pop("pilot")
        message = self.assert_refused(body, "cost", "hourly_rate_per_gpu")
        self.assertIn("GPU-hours", message)

    def test_an_unknown_field_is_refused_naming_it(self) -> None:
        body = body_with(hardware={"gpus": 8})
        message = self.assert_refused(body, "hardware", "gpus")
        self.assertEqual(message, "Unknown field.")
        top = copy.deepcopy(API_EXAMPLE)
        top["hardwares"] = {}
        answer = self.post(top)
        self.assertEqual(answer.status_code, 400)
        self.assertEqual(answer.json(), {"hardwares": ["Unknown field."]})

    def test_the_schema_states_each_range_as_minimum_and_maximum(self) -> None:
        self.client.force_login(self.planner)
        schema = self.client.get("/api/v1/schema/", headers={"Accept": "application/json"}).json()
        components = schema["components"]["schemas"]
        parameters = components["ModelSpecRequest"]["properties"]["parameters"]
        self.assertEqual(parameters["maximum"], LIMITS["model.parameters"][1])
        self.assertEqual(parameters["minimum"], LIMITS["model.parameters"][0])
        utilization = components["HardwareSpecRequest"]["properties"]["utilization"]
        self.assertEqual(utilization["minimum"], LIMITS["hardware.utilization"][0])


finite = st.floats(allow_nan=False, allow_infinity=False)
number = st.one_of(finite, st.integers(min_value=-(10**30), max_value=10**30))


class NoServerErrorTests(AsPlanner, HypothesisTestCase):
    """Whatever finite numbers a caller sends, the answer is a 200 or a 400 naming a field sent."""

    @FUZZ
    @given(
        parameters=number,
        tokens=number,
        epochs=number,
        sequence_length=number,
        hidden_size=number,
        layers=number,
        count=number,
        utilization=number,
        pilot=st.one_of(st.none(), number),
        rate=st.one_of(st.none(), st.decimals(allow_nan=False, allow_infinity=False)),
    )
    def test_no_finite_input_answers_500(
        self,
        parameters: Any,
        tokens: Any,
        epochs: Any,
        sequence_length: Any,
        hidden_size: Any,
        layers: Any,
        count: Any,
        utilization: Any,
        pilot: Any,
        rate: Decimal | None,
    ) -> None:
        body = body_with(
            model={"parameters": parameters, "hidden_size": hidden_size, "layers": layers},
            training={"tokens": tokens, "epochs": epochs, "sequence_length": sequence_length},
            hardware={"count": count, "utilization": utilization},
        )
        if pilot is None:
            body.pop("pilot")
        else:
            body["pilot"] = {"tokens_per_second": pilot}
        if rate is None:
            body.pop("cost")
        else:
            body["cost"]["hourly_rate_per_gpu"] = str(rate)
        self.assert_200_or_a_400_naming_what_was_sent(self.post(body), body)


def test_a_cost_beyond_the_largest_amount_is_refused_rather_than_raising_invalid_operation() -> (
    None
):
    # 1e30 hours quantized to cents needs 33 digits, more than Decimal's 28: InvalidOperation.
    with pytest.raises(AmountOverflowError) as refused:
        hourly_cost(1, 1e30, Decimal("1.50"))
    assert refused.value.field == "hours"
    assert hourly_cost(1, 1e12, Decimal("1.50")) == Decimal("1500000000000.00")


def test_break_even_counts_months_exactly_when_the_quotient_exceeds_28_digits() -> None:
    # Decimal's divmod raised DivisionImpossible here; the exact answer is 1e30 months.
    months = break_even_months(Decimal("1e30"), Decimal("2"), 1.0, Decimal("1"))
    assert months == 10**30


class NoServerErrorInTheNewSectionsTests(AsPlanner, HypothesisTestCase):
    """Energy, reliability and custom hardware: a 200 or a 400 naming a field sent."""

    @FUZZ
    @given(
        write=number,
        mtbf=number,
        pue=number,
        grid=number,
        memory=number,
        peak=number,
        kind=st.sampled_from(["hfu", "mfu"]),
        offload=st.sampled_from(["none", "optimizer", "optimizer_and_parameters"]),
        stage=st.integers(min_value=0, max_value=3),
    )
    def test_no_finite_input_answers_500(
        self,
        write: Any,
        mtbf: Any,
        pue: Any,
        grid: Any,
        memory: Any,
        peak: Any,
        kind: str,
        offload: str,
        stage: int,
    ) -> None:
        body = copy.deepcopy(API_EXAMPLE)
        body["hardware"].pop("gpu")
        body["hardware"].update(
            {
                "custom": {"name": "x", "memory_bytes": memory, "peak_flops": {"bf16": peak}},
                "utilization_kind": kind,
                "offload": offload,
                "zero_stage": stage,
            }
        )
        body["energy"] = {"pue": pue, "grid_kg_co2_per_kwh": grid, "tdp_watts": 300}
        body["reliability"] = {"checkpoint_write_seconds": write, "mtbf_hours": mtbf}
        self.assert_200_or_a_400_naming_what_was_sent(self.post(body), body)


class NoServerErrorElsewhereTests(AsPlanner, HypothesisTestCase):
    """compute-optimal and serving: a 200 or a 400 for any finite numbers."""

    @FUZZ
    @given(
        flops=st.one_of(st.none(), number),
        parameters=st.one_of(st.none(), number),
        epochs=number,
        amount=st.decimals(allow_nan=False, allow_infinity=False, places=2),
        rate=st.decimals(allow_nan=False, allow_infinity=False, places=4),
        utilization=number,
    )
    def test_compute_optimal_never_answers_500(
        self,
        flops: Any,
        parameters: Any,
        epochs: Any,
        amount: Decimal,
        rate: Decimal,
        utilization: Any,
    ) -> None:
        body: dict[str, Any] = {"epochs": epochs}
        if flops is not None:
            body["flops"] = flops
        if parameters is not None:
            body["parameters"] = parameters
        if flops is None and parameters is None:
            body["budget"] = {
                "amount": str(amount),
                "gpu": "H100-80GB",
                "utilization": utilization,
                "hourly_rate_per_gpu": str(rate),
            }
        answer = self.post(body, "/api/v1/estimates/compute-optimal/")
        self.assertIn(answer.status_code, (200, 400), answer.content)

    @FUZZ
    @given(
        requests=number,
        tokens=number,
        throughput=number,
        months=number,
        rate=st.decimals(allow_nan=False, allow_infinity=False, places=4),
        billing=st.sampled_from(["busy", "always_on"]),
        gpus=number,
        price=st.decimals(allow_nan=False, allow_infinity=False, places=2),
        watts=number,
    )
    def test_serving_never_answers_500(
        self,
        requests: Any,
        tokens: Any,
        throughput: Any,
        months: Any,
        rate: Decimal,
        billing: str,
        gpus: Any,
        price: Decimal,
        watts: Any,
    ) -> None:
        body = {
            "requests_per_month": requests,
            "tokens_per_request": tokens,
            "tokens_per_second_per_gpu": throughput,
            "months": months,
            "hourly_rate_per_gpu": str(rate),
            "billing": billing,
            "gpus": gpus,
            "training_cost": str(price),
            "local": {
                "purchase_price": str(price),
                "power_watts": watts,
                "electricity_per_kwh": "0.30",
                "lifetime_months": 36,
            },
        }
        answer = self.post(body, "/api/v1/estimates/serving/")
        self.assertIn(answer.status_code, (200, 400), answer.content)


def test_a_lot_price_beyond_28_digits_is_shown_rather_than_raising_invalid_operation() -> None:
    from estimates.domain.lot_selection.explanation import _fmt_money

    assert _fmt_money(Decimal("1e30"), "USD") == "1E+30 USD"
    assert _fmt_money(Decimal("47.14"), "USD") == "47.14 USD"


class PlanListingTests(TestCase):
    def test_a_plan_row_without_hours_is_listed_with_a_zero_hourly_price_not_a_500(self) -> None:
        from catalog.models import GpuModel, RentalPlan

        seed_catalog()
        gpu = GpuModel.objects.get(name="RTX-4090")
        RentalPlan.objects.create(
            provider="Old", name="broken", gpu=gpu, duration_hours=Decimal("0"), price=Decimal("1")
        )
        viewer = make_user("pl", team=Team.objects.create(name="t"), role="viewer")
        answer = self.client.get("/api/v1/estimates/plans/", **token_header(viewer))
        self.assertEqual(answer.status_code, 200)
        broken = next(p for p in answer.json()["results"] if p["name"] == "broken")
        self.assertEqual(broken["price_per_hour"], "0.0000")


class NoServerErrorInHardwareOptionsTests(AsPlanner, HypothesisTestCase):
    """hardware-options: a 200 or a 400 for any finite numbers (each example ranks ~19 GPUs)."""

    @settings(FUZZ, max_examples=25)
    @given(
        parameters=number,
        tokens_per_second=number,
        window=st.one_of(st.none(), number),
        rate=st.decimals(allow_nan=False, allow_infinity=False, places=4),
        pilot_gpu=st.sampled_from(["A100-80GB", "H100-80GB", "T4", "TPU-v5e"]),
    )
    def test_no_finite_input_answers_500(
        self, parameters: Any, tokens_per_second: Any, window: Any, rate: Decimal, pilot_gpu: str
    ) -> None:
        body = copy.deepcopy(API_EXAMPLE)
        body["model"]["parameters"] = parameters
        body["pilot"] = {"tokens_per_second": tokens_per_second, "gpu": pilot_gpu}
        body["rates"] = {"H100-SXM": str(rate)}
        if window is not None:
            body["window_hours"] = window
        answer = self.post(body, OPTIONS)
        self.assertIn(answer.status_code, (200, 400), answer.content)
