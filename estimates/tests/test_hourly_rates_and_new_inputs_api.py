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
from catalog.models import GpuModel, HourlyRate, RentalPlan
from estimates.templatetags.estimates_hardware import hardware_options_panel
from estimates.tests.support import AsPlanner, OnTheDemoCampaign

MIB = 2**20


class CampaignOptionsPriceHourlyRatesTests(OnTheDemoCampaign, TestCase):
    """The demo campaign has RTX 4090 and B200 lots; the H100 SXM only Lambda's and AWS's
    published hourly rates: per GPU of an 8-GPU instance, and Lambda's for one GPU alone."""

    def ranked(self) -> list[dict[str, Any]]:
        answer = self.client.get(
            f"/api/v1/campaigns/{self.campaign.pk}/hardware-options/", **token_header(self.owner)
        )
        self.assertEqual(answer.status_code, 200, answer.content)
        ranked: list[dict[str, Any]] = answer.json()["options"]
        return ranked

    def options(self) -> dict[str, Any]:
        return {option["gpu"]: option for option in self.ranked()}

    def test_a_one_gpu_job_on_the_h100_is_billed_as_the_plan_that_sells_one_gpu(self) -> None:
        # Issue 31: the one-GPU LoRA items were billed as whole 8-GPU instances (8 x 2.99 =
        # 23.92 USD an hour); Lambda's 1x H100 SXM at 3.78 bills one GPU.
        h100 = self.options()["H100-SXM"]
        plan = h100["plan"]
        self.assertEqual((plan["kind"], plan["rate_per_gpu_hour"]), ("hourly", "3.7800"))
        self.assertIn("Lambda's published rate, as of 2026-05-07", plan["description"])
        self.assertNotIn("rented", plan["description"])
        # The items' GPU-hours and the calendar's other machine stages (setup, loading: issue
        # 30), all on the rented GPU.
        hours = Decimal(str(h100["gpu_hours"])) + Decimal(str(h100["other_machine_hours"]))
        self.assertGreater(Decimal(str(h100["other_machine_hours"])), 0)
        self.assertAlmostEqual(
            float(h100["total_cost"]["amount"]), float(Decimal("3.78") * hours), delta=0.05
        )

    def test_lots_keep_their_own_price_beside_the_one_gpu_hourly_plan(self) -> None:
        ranked = self.ranked()
        rtx = next(o for o in ranked if o["gpu"] == "RTX-4090")
        self.assertEqual((rtx["plan"]["kind"], rtx["total_cost"]["amount"]), ("lots", "47.14"))
        # Those that fit the window first, each group by cost.
        keys = [
            (not o["fits_window"], Decimal(o["total_cost"]["amount"]))
            for o in ranked
            if o["total_cost"]
        ]
        self.assertEqual(keys, sorted(keys))

    def test_the_panel_names_the_provider_and_date_of_an_hourly_price(self) -> None:
        html = render_to_string(
            "estimates/hardware_options_panel.html",
            hardware_options_panel(self.campaign, top=len(catalog.GPUS)),
        )
        self.assertIn("H100-SXM", html)
        self.assertIn("hourly at 3.7800 USD per GPU-hour (Lambda&#x27;s published rate", html)

    def test_without_a_one_gpu_rate_the_job_pays_for_a_whole_8_gpu_instance_and_says_so(
        self,
    ) -> None:
        HourlyRate.objects.filter(gpu__name="H100-SXM", gpus_per_instance=1).delete()
        h100 = self.options()["H100-SXM"]
        plan = h100["plan"]
        self.assertEqual(plan["rate_per_gpu_hour"], "2.9900")
        self.assertIn("Lambda's published rate, as of 2025-01-15", plan["description"])
        self.assertIn("rented 8 GPUs at a time", plan["description"])
        # The cheaper of the two 8-GPU rates (AWS's is 12.29), on 8 GPUs for the wall hours.
        # On 8 GPUs for the wall hours and the calendar's other machine stages (issue 30).
        hours = Decimal(str(h100["wall_hours"])) + Decimal(str(h100["other_machine_hours"]))
        self.assertAlmostEqual(
            float(h100["total_cost"]["amount"]), float(Decimal("2.99") * 8 * hours), delta=0.1
        )


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

    def test_the_published_hourly_rates_say_the_instance_they_are_per_gpu_of(self) -> None:
        for spec in catalog.HOURLY_RATES:
            with self.subTest(provider=spec.provider, instance=spec.gpus_per_instance):
                row = HourlyRate.objects.get(
                    provider=spec.provider,
                    gpu__name=spec.gpu,
                    gpus_per_instance=spec.gpus_per_instance,
                )
                self.assertEqual(row.rate_per_gpu_hour, spec.rate_per_gpu_hour)
                self.assertEqual(row.source, spec.source)
                self.assertEqual(row.as_of, spec.as_of)
        self.assertEqual(
            sorted(HourlyRate.objects.values_list("gpus_per_instance", flat=True)), [1, 8, 8, 8]
        )

    def test_the_seeded_lots_carry_their_source_and_the_day_the_seed_was_read(self) -> None:
        for spec in catalog.RENTAL_PLANS:
            with self.subTest(plan=spec.name):
                row = RentalPlan.objects.get(provider=spec.provider, name=spec.name)
                self.assertEqual(row.as_of, catalog.SEED_READ_ON)
                self.assertTrue(row.source)

    def test_every_catalog_gpu_carries_its_measured_links_and_memory_bandwidth(self) -> None:
        for name, spec in catalog.GPUS.items():
            with self.subTest(gpu=name):
                row = GpuModel.objects.get(name=name).as_spec()
                self.assertEqual(row.links, spec.links)
                self.assertEqual(
                    row.memory_bandwidth_bytes_per_second, spec.memory_bandwidth_bytes_per_second
                )
