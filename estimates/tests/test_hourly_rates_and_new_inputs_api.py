"""The campaign's "which GPU" options priced at the catalog's published hourly rates, the
preview's activation-size and gradient-accumulation inputs, and the catalog rows the migrations
leave (issue 17; docs/domain.md §24.5, §24.7, §24.8, §24.10)."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from django.template.loader import render_to_string
from django.test import TestCase

from campaigns.tests.factories import token_header
from catalog.domain import catalog
from catalog.models import GpuModel, HourlyRate
from estimates.templatetags.estimates_hardware import hardware_options_panel
from estimates.tests.support import AsPlanner, OnTheDemoCampaign

MIB = 2**20


class CampaignOptionsPriceHourlyRatesTests(OnTheDemoCampaign, TestCase):
    """The demo campaign has RTX 4090 and B200 lots; the H100 SXM only Lambda's and AWS's
    published hourly rates, per GPU of an 8-GPU instance (their pricing pages)."""

    def ranked(self) -> list[dict[str, Any]]:
        answer = self.client.get(
            f"/api/v1/campaigns/{self.campaign.pk}/hardware-options/", **token_header(self.owner)
        )
        self.assertEqual(answer.status_code, 200, answer.content)
        ranked: list[dict[str, Any]] = answer.json()["options"]
        return ranked

    def options(self) -> dict[str, Any]:
        return {option["gpu"]: option for option in self.ranked()}

    def test_the_h100_is_priced_at_lambdas_rate_for_a_whole_8_gpu_instance_and_says_so(
        self,
    ) -> None:
        h100 = self.options()["H100-SXM"]
        plan = h100["plan"]
        self.assertEqual((plan["kind"], plan["rate_per_gpu_hour"]), ("hourly", "2.9900"))
        self.assertIn("Lambda's published rate, as of 2025-01-15", plan["description"])
        self.assertIn("rented 8 GPUs at a time", plan["description"])
        # The cheaper of the two published rates (AWS's is 12.29), on 8 GPUs for the wall hours.
        expected = (Decimal("2.99") * 8 * Decimal(str(h100["wall_hours"]))).quantize(
            Decimal("0.01")
        )
        self.assertEqual(Decimal(h100["total_cost"]["amount"]), expected)

    def test_the_4090_lot_still_comes_first_and_lots_keep_their_own_price(self) -> None:
        ranked = self.ranked()
        self.assertEqual((ranked[0]["gpu"], ranked[0]["plan"]["kind"]), ("RTX-4090", "lots"))
        self.assertEqual(ranked[0]["total_cost"]["amount"], "47.14")

    def test_the_panel_names_the_provider_and_date_of_an_hourly_price(self) -> None:
        html = render_to_string(
            "estimates/hardware_options_panel.html",
            hardware_options_panel(self.campaign, top=len(catalog.GPUS)),
        )
        self.assertIn("H100-SXM", html)
        self.assertIn("hourly at 2.9900 USD per GPU-hour (Lambda&#x27;s published rate", html)

    def test_a_rate_for_a_single_gpu_bills_only_the_gpus_used(self) -> None:
        HourlyRate.objects.filter(gpu__name="H100-SXM").update(gpus_per_instance=1)
        h100 = self.options()["H100-SXM"]
        self.assertNotIn("rented", h100["plan"]["description"])
        expected = (Decimal("2.99") * Decimal(str(h100["gpu_hours"]))).quantize(Decimal("0.01"))
        self.assertEqual(Decimal(h100["total_cost"]["amount"]), expected)


RESNET50: dict[str, Any] = {
    "model": {"parameters": 25_557_032},
    "training": {
        "samples": 1.28e6,
        "flops_per_sample": 4.1e9,
        "micro_batch_size": 32,
        "precision": "bf16",
        "optimizer": "sgd",
        "activation_bytes_per_sample": 120.3 * MIB,
    },
    "hardware": {"gpu": "T4"},
    "pilot": {"samples_per_second": 250},
}


class NewPreviewInputsTests(AsPlanner, TestCase):
    def test_a_cnns_activations_per_sample_count_in_its_memory_and_fit(self) -> None:
        answer = self.post({**RESNET50, "training": {**RESNET50["training"], "precision": "fp16"}})
        self.assertEqual(answer.status_code, 200, answer.content)
        result = answer.json()
        self.assertTrue(result["activations_counted"])
        self.assertEqual(result["memory_per_device_bytes"]["activations"], round(32 * 120.3 * MIB))
        self.assertTrue(result["fits_in_memory"])  # 3.8 GiB of activations on a 16 GiB T4
        self.assertTrue(any("as given" in r for r in result["recommendations"]))

    def test_gradient_accumulation_sets_the_global_batch_the_communication_reports(self) -> None:
        body = {
            "model": {"parameters": 8.03e9, "layers": 32, "hidden_size": 4096,
                      "attention_heads": 32},
            "training": {"tokens": 1e10, "sequence_length": 8192,
                         "gradient_accumulation_steps": 32, "flash_attention": True},
            "hardware": {"gpu": "H100-SXM", "count": 8, "context_parallel": 2, "zero_stage": 1},
        }  # fmt: skip
        answer = self.post(body)
        self.assertEqual(answer.status_code, 200, answer.content)
        self.assertEqual(answer.json()["communication"]["global_batch_size"], 128)

    def test_the_schema_states_the_new_inputs_with_their_ranges(self) -> None:
        self.client.force_login(self.planner)
        schema = self.client.get("/api/v1/schema/", headers={"Accept": "application/json"}).json()
        training = schema["components"]["schemas"]["TrainingSpecRequest"]["properties"]
        self.assertEqual(training["gradient_accumulation_steps"]["minimum"], 1)
        self.assertEqual(training["gradient_accumulation_steps"]["default"], 1)
        self.assertEqual(training["activation_bytes_per_sample"]["minimum"], 1.0)
        peaks = schema["components"]["schemas"]["PeakFlopsRequest"]["properties"]
        self.assertIn("fp4", peaks)

    def test_a_zero_accumulation_is_a_400_naming_it(self) -> None:
        body = {**RESNET50, "training": {**RESNET50["training"], "gradient_accumulation_steps": 0}}
        answer = self.post(body)
        self.assertEqual(answer.status_code, 400, answer.content)
        self.assertIn("gradient_accumulation_steps", answer.json()["training"])


class MigratedCatalogTests(TestCase):
    """The rows the catalog migrations leave (no seed_catalog here) are the live catalog's."""

    def test_the_fp4_cards_carry_their_datasheet_peaks_and_sources(self) -> None:
        for name, tflops in (
            ("B200", 9000.0),
            ("B300", 13500.0),
            ("GB200", 10000.0),
            ("RTX-5090", 1676.0),
            ("MI355X", 10066.4),
        ):
            with self.subTest(gpu=name):
                row = GpuModel.objects.get(name=name)
                self.assertEqual(row.peak_flops["fp4"], tflops * 1e12)
                self.assertEqual(row.peak_flops, dict(catalog.GPUS[name].peak_flops))
                self.assertEqual(row.source, catalog.GPUS[name].source)
                self.assertTrue(row.as_spec().supports("fp4"))

    def test_the_published_hourly_rates_are_per_gpu_of_8_gpu_instances(self) -> None:
        for spec in catalog.HOURLY_RATES:
            with self.subTest(provider=spec.provider):
                row = HourlyRate.objects.get(provider=spec.provider, gpu__name=spec.gpu)
                self.assertEqual(row.gpus_per_instance, 8)
                self.assertEqual(row.source, spec.source)
                self.assertEqual(row.as_of, spec.as_of)
