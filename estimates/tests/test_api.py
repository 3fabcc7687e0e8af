"""The stateless calculator (POST /estimates/preview/) and the catalog listings."""

from __future__ import annotations

import copy
from decimal import Decimal
from typing import Any

from django.test import TestCase

from campaigns.models import Team
from campaigns.services.keys import issue_ingest_key
from campaigns.tests.factories import make_campaign, make_user, token_header
from catalog.services import seed_catalog
from estimates.tests.support import API_EXAMPLE

PREVIEW = "/api/v1/estimates/preview/"
HARDWARE = "/api/v1/estimates/hardware/"
PLANS = "/api/v1/estimates/plans/"


def with_changes(**sections: dict[str, Any]) -> dict[str, Any]:
    body = copy.deepcopy(API_EXAMPLE)
    for name, changes in sections.items():
        body[name] = {**body.get(name, {}), **changes}
    return body


class PreviewTests(TestCase):
    team: Any
    planner: Any
    viewer: Any
    ingest_key: Any

    @classmethod
    def setUpTestData(cls) -> None:
        seed_catalog()  # the rows of migration 0002, whatever an earlier test flushed
        cls.team = Team.objects.create(name="nlp")
        cls.planner = make_user("pia", team=cls.team, role="planner")
        cls.viewer = make_user("vic", team=cls.team, role="viewer")
        _key, cls.ingest_key = issue_ingest_key(campaign=make_campaign(cls.team))

    def post(self, body: Any, user: Any = None) -> Any:
        return self.client.post(
            PREVIEW, body, content_type="application/json", **token_header(user or self.planner)
        )

    def assert_field_error(self, body: dict[str, Any], section: str, field: str) -> Any:
        answer = self.post(body)
        self.assertEqual(answer.status_code, 400, answer.content)
        errors = answer.json()
        self.assertIn(section, errors)
        self.assertIn(field, errors[section])
        self.assertIsInstance(errors[section][field], list)
        self.assertTrue(errors[section][field][0])
        return errors[section][field][0]

    def test_it_refuses_numbers_as_strings_and_0_or_1_as_booleans(self) -> None:
        self.assert_field_error(with_changes(model={"parameters": "7e9"}), "model", "parameters")
        self.assert_field_error(with_changes(model={"layers": "32"}), "model", "layers")
        self.assert_field_error(
            with_changes(training={"activation_checkpointing": 1}),
            "training",
            "activation_checkpointing",
        )

    def test_the_schema_says_unknown_fields_are_refused_as_the_api_does(self) -> None:
        self.assert_field_error(with_changes(model={"paramters": 7e9}), "model", "paramters")
        answer = self.client.get("/api/v1/schema/?format=json", **token_header(self.planner))
        schemas = answer.json()["components"]["schemas"]
        for name in ["EstimatePreviewRequest", "ModelSpecRequest", "TrainingSpecRequest"]:
            with self.subTest(name=name):
                self.assertIs(schemas[name]["additionalProperties"], False)

    def test_the_api_example_answers_4_2e22_flops_timed_by_the_pilot(self) -> None:
        answer = self.post(API_EXAMPLE)
        self.assertEqual(answer.status_code, 200, answer.content)
        body = answer.json()
        self.assertAlmostEqual(body["training_flops"], 4.2e22, delta=1e12)
        self.assertEqual(body["time_source"], "pilot")
        # 1e12 tokens at 25,000 tokens/s: 11,111.1 h on the 8 GPUs, 88,888.9 GPU-hours.
        self.assertAlmostEqual(body["wall_hours"], 1e12 / 25000 / 3600, places=6)
        self.assertAlmostEqual(body["gpu_hours"], 8 * 1e12 / 25000 / 3600, places=5)
        memory = body["memory_per_device_bytes"]
        self.assertEqual(
            set(memory),
            {"weights", "gradients", "optimizer", "activations", "total", "framework"},
        )
        # Mixed-precision Adam at ZeRO stage 0: 2 + 2 + 12 bytes per parameter.
        self.assertEqual(memory["weights"], 14_000_000_000)
        self.assertEqual(memory["optimizer"], 84_000_000_000)
        self.assertEqual(memory["total"], sum(v for k, v in memory.items() if k != "total"))
        self.assertFalse(body["fits_in_memory"])
        self.assertEqual(body["cost"]["currency"], "USD")
        self.assertIsInstance(body["cost"]["amount"], str)
        self.assertEqual(Decimal(body["cost"]["amount"]), Decimal("133333.33"))
        self.assertTrue(body["recommendations"])
        self.assertEqual(body["gpu"]["name"], "A100-80GB")

    def test_samples_times_tokens_per_sample_count_like_the_same_tokens(self) -> None:
        body = copy.deepcopy(API_EXAMPLE)
        del body["training"]["tokens"]
        body["training"].update(samples=2.5e8, tokens_per_sample=4000)
        answer = self.post(body)
        self.assertEqual(answer.status_code, 200, answer.content)
        self.assertAlmostEqual(answer.json()["training_flops"], 4.2e22, delta=1e12)

    def test_without_a_pilot_time_is_assumed_and_without_a_cost_the_cost_is_null(self) -> None:
        body = copy.deepcopy(API_EXAMPLE)
        del body["pilot"], body["cost"]
        answer = self.post(body)
        self.assertEqual(answer.status_code, 200, answer.content)
        result = answer.json()
        self.assertEqual(result["time_source"], "assumed")
        self.assertIsNone(result["cost"])
        # Utilization divides the FLOPs executed, counted as PaLM's appendix B counts them:
        # (6N + 12 L h s) per token, 1e12 x (4.2e10 + 6.44e9) / (8 x 312 TFLOP/s x 0.4) / 3600.
        per_token = 6 * 7e9 + 12 * 32 * 4096 * 4096
        # Within 0.1%: DDP's last 25 MiB bucket is exposed (docs/domain.md §24.6).
        expected = 1e12 * per_token / (8 * 312e12 * 0.4) / 3600
        self.assertAlmostEqual(result["wall_hours"], expected, delta=expected * 1e-3)
        self.assertTrue(any("No pilot" in r for r in result["recommendations"]))

    def test_a_viewer_may_use_the_calculator_since_it_writes_nothing(self) -> None:
        self.assertEqual(self.post(API_EXAMPLE, user=self.viewer).status_code, 200)

    def test_zero_or_negative_parameters_are_refused_naming_model_parameters(self) -> None:
        for value in (0, -7e9):
            with self.subTest(value=value):
                message = self.assert_field_error(
                    with_changes(model={"parameters": value}), "model", "parameters"
                )
                self.assertIn("greater than or equal to 1", message)

    def test_an_unknown_gpu_is_refused_naming_hardware_gpu(self) -> None:
        message = self.assert_field_error(
            with_changes(hardware={"gpu": "Voodoo-5"}), "hardware", "gpu"
        )
        self.assertIn("Voodoo-5", message)

    def test_a_gpu_name_is_matched_ignoring_case_and_hyphens(self) -> None:
        answer = self.post(with_changes(hardware={"gpu": "a100 80gb"}))
        self.assertEqual(answer.status_code, 200, answer.content)
        self.assertEqual(answer.json()["gpu"]["name"], "A100-80GB")

    def test_utilization_outside_zero_to_one_is_refused_naming_hardware_utilization(self) -> None:
        for value in (0, -0.1, 1.5):
            with self.subTest(value=value):
                self.assert_field_error(
                    with_changes(hardware={"utilization": value}), "hardware", "utilization"
                )

    def test_a_zero_stage_outside_0_to_3_is_refused_naming_hardware_zero_stage(self) -> None:
        for value in (4, -1):
            with self.subTest(value=value):
                self.assert_field_error(
                    with_changes(hardware={"zero_stage": value}), "hardware", "zero_stage"
                )

    def test_money_sent_as_a_json_float_is_refused_naming_the_field(self) -> None:
        message = self.assert_field_error(
            with_changes(cost={"hourly_rate_per_gpu": 1.5}), "cost", "hourly_rate_per_gpu"
        )
        self.assertIn("decimal string", message)
        self.assert_field_error(with_changes(cost={"extra": 0.1}), "cost", "extra")

    def test_a_precision_the_gpu_lacks_is_refused_naming_training_precision(self) -> None:
        self.assert_field_error(
            with_changes(hardware={"gpu": "V100-32GB"}, training={"precision": "bf16"}),
            "training",
            "precision",
        )

    def test_tokens_and_samples_together_are_refused_naming_training_tokens(self) -> None:
        self.assert_field_error(
            with_changes(training={"samples": 1e6, "tokens_per_sample": 100}), "training", "tokens"
        )

    def test_a_missing_section_is_refused_with_drfs_required_message(self) -> None:
        body = copy.deepcopy(API_EXAMPLE)
        del body["hardware"]
        answer = self.post(body)
        self.assertEqual(answer.status_code, 400)
        self.assertEqual(answer.json()["hardware"], ["This field is required."])

    def test_an_ingest_key_may_not_use_the_calculator(self) -> None:
        answer = self.client.post(
            PREVIEW,
            API_EXAMPLE,
            content_type="application/json",
            HTTP_AUTHORIZATION=f"Bearer {self.ingest_key}",
        )
        self.assertEqual(answer.status_code, 403)

    def test_an_anonymous_caller_is_refused(self) -> None:
        answer = self.client.post(PREVIEW, API_EXAMPLE, content_type="application/json")
        self.assertIn(answer.status_code, (401, 403))


class CatalogListingTests(TestCase):
    team: Any
    viewer: Any
    planner: Any
    ingest_key: Any

    @classmethod
    def setUpTestData(cls) -> None:
        seed_catalog()
        cls.team = Team.objects.create(name="nlp")
        cls.viewer = make_user("vic", team=cls.team, role="viewer")
        cls.planner = make_user("pia", team=cls.team, role="planner")
        _key, cls.ingest_key = issue_ingest_key(campaign=make_campaign(cls.team))

    def get(self, url: str) -> Any:
        answer = self.client.get(url, **token_header(self.viewer))
        self.assertEqual(answer.status_code, 200, answer.content)
        return answer.json()["results"]

    def test_hardware_lists_each_gpu_with_its_memory_and_peak_flops_per_precision(self) -> None:
        gpus = {g["name"]: g for g in self.get(HARDWARE)}
        a100 = gpus["A100-80GB"]
        self.assertEqual(a100["memory_bytes"], 80 * 2**30)
        self.assertEqual(a100["peak_flops"]["bf16"], 3.12e14)
        self.assertEqual(a100["peak_flops"]["fp32"], 1.95e13)
        self.assertIn("RTX-4090", gpus)

    def test_plans_list_the_rtx_4090_lots_at_47_14_110_00_and_390_00(self) -> None:
        plans = [p for p in self.get(PLANS) if p["gpu"] == "RTX-4090"]
        self.assertEqual(
            [(p["duration_hours"], p["price"], p["currency"]) for p in plans],
            [("72.00", "47.14", "USD"), ("168.00", "110.00", "USD"), ("720.00", "390.00", "USD")],
        )
        self.assertTrue(all(p["provider"] == "IteraGPU" and p["gpus_per_lot"] == 1 for p in plans))

    def test_the_two_gpu_b200_lot_is_priced_per_lot_not_per_gpu(self) -> None:
        (b200,) = [p for p in self.get(PLANS) if p["gpu"] == "B200"]
        self.assertEqual(b200["gpus_per_lot"], 2)
        self.assertEqual(b200["price"], "648.00")
        # 648.00 for the lot of two over 72 h: 9.00 per lot-hour, never 18.00.
        self.assertEqual(b200["price_per_hour"], "9.0000")

    def test_the_catalog_is_read_only_through_the_api(self) -> None:
        answer = self.client.post(
            PLANS, {"provider": "x"}, content_type="application/json", **token_header(self.planner)
        )
        self.assertEqual(answer.status_code, 405)

    def test_an_ingest_key_may_not_read_the_catalog(self) -> None:
        for url in (HARDWARE, PLANS):
            answer = self.client.get(url, HTTP_AUTHORIZATION=f"Bearer {self.ingest_key}")
            self.assertEqual(answer.status_code, 403)
