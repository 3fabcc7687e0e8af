"""Issue 31 through the API: the new inputs (fused and shaped LoRA targets, encoder-decoder,
attention width, int4 with GPTQ/AWQ, 8-bit and paged optimizers, the loss, the pilot's
micro-batch, expert placement), every figure's range, the collectives, the scaling law, and no
500 for any finite value of them (docs/domain.md §24)."""

from __future__ import annotations

import copy
from typing import Any

from django.test import TestCase
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.django import TestCase as HypothesisTestCase

from estimates.domain.formulas import LIMITS
from estimates.tests.support import FUZZ, OPTIONS, PREVIEW, AsPlanner
from estimates.tests.test_finetuning import LLAMA31_8B

LLAMA_8B: dict[str, Any] = {
    "model": dict(LLAMA31_8B),
    "training": {
        "tokens": 1e8,
        "sequence_length": 2048,
        "method": "lora",
        "lora": {"rank": 16, "target_modules": "all-linear"},
        "activation_checkpointing": True,
        "flash_attention": True,
    },
    "hardware": {"gpu": "A100-80GB"},
}


class NewInputsTests(AsPlanner, TestCase):
    def ok(self, body: Any, url: str = PREVIEW) -> dict[str, Any]:
        answer = self.post(body, url)
        self.assertEqual(answer.status_code, 200, answer.content)
        result: dict[str, Any] = answer.json()
        return result

    def test_fused_targets_count_one_adapter_over_the_shared_input(self) -> None:
        separate, fused = copy.deepcopy(LLAMA_8B), copy.deepcopy(LLAMA_8B)
        separate["training"]["lora"]["target_modules"] = ["q_proj", "k_proj", "v_proj"]
        fused["training"]["lora"]["target_modules"] = ["qkv_proj"]
        # q, k, v apart: r (3h + w + 2kv); fused: r (h + w + 2kv), 2 r h less a layer.
        difference = (
            self.ok(separate)["trainable_parameters"] - self.ok(fused)["trainable_parameters"]
        )
        self.assertEqual(difference, 2 * 16 * 4096 * 32)

    def test_a_module_given_by_its_shape_is_counted_from_it(self) -> None:
        body = copy.deepcopy(LLAMA_8B)
        body["training"]["lora"]["target_modules"] = [
            {"name": "router", "in_features": 4096, "out_features": 8, "count": 2}
        ]
        self.assertEqual(self.ok(body)["trainable_parameters"], 16 * (4096 + 8) * 2 * 32)
        body["training"]["lora"]["target_modules"] = [{"name": "x", "in_features": 0}]
        answer = self.post(body)
        self.assertEqual(answer.status_code, 400, answer.content)
        self.assertIn("target_modules", answer.json()["training"]["lora"])

    def test_an_encoder_decoder_counts_three_attention_blocks_a_layer(self) -> None:
        # mt0-large (T5: 24 layers a stack, d_model 1024): PEFT's 2,359,296 for r=8 on q, v.
        body = {
            "model": {
                "parameters": 1.23e9,
                "layers": 24,
                "hidden_size": 1024,
                "attention_heads": 16,
                "intermediate_size": 2816,
                "vocab_size": 250112,
                "architecture": "encoder_decoder",
            },
            "training": {
                "tokens": 1e7,
                "method": "lora",
                "lora": {"rank": 8, "target_modules": ["q", "v"]},
            },
            "hardware": {"gpu": "A100-80GB"},
        }
        self.assertEqual(self.ok(body)["trainable_parameters"], 2_359_296)

    def test_an_attention_width_unlike_the_hidden_size_shapes_q_and_o(self) -> None:
        # Gemma 7B: 16 heads of 256 on a 3,072-wide model: q maps 3072 -> 4096.
        body = copy.deepcopy(LLAMA_8B)
        body["model"].update(
            hidden_size=3072, attention_heads=16, key_value_heads=16, attention_width=4096
        )
        body["training"]["lora"]["target_modules"] = ["q"]
        self.assertEqual(self.ok(body)["trainable_parameters"], 16 * (3072 + 4096) * 32)
        body["model"]["attention_width"] = 4090  # not 16 heads of a whole size
        self.assertIn("attention_width", self.post(body).json()["model"])

    def test_int4_weights_take_gptqs_4_156_bits_and_quantization_needs_int4(self) -> None:
        body = copy.deepcopy(LLAMA_8B)
        body["model"].update(weight_precision="int4", quantization="gptq")
        int4 = self.ok(body)["memory_per_device_bytes"]["weights"]
        body["model"].update(weight_precision="nf4", quantization=None)
        nf4 = self.ok(body)["memory_per_device_bytes"]["weights"]
        self.assertLess(int4, nf4)  # 4.156 bits a weight against 4.5
        body["model"].update(quantization="awq")
        self.assertIn("quantization", self.post(body).json()["model"])

    def test_8_bit_and_paged_optimizers(self) -> None:
        body = copy.deepcopy(LLAMA_8B)
        body["training"].update(method="full", optimizer="adamw")
        body["training"].pop("lora")
        body["hardware"].update(count=8, zero_stage=3)
        adamw = self.ok(body)["memory_per_device_bytes"]["optimizer"]
        body["training"]["optimizer"] = "adamw_8bit"
        eight_bit = self.ok(body)["memory_per_device_bytes"]["optimizer"]
        self.assertAlmostEqual(eight_bit / adamw, 6 / 12, places=3)
        body["training"]["optimizer"] = "paged_adamw_8bit"
        self.assertEqual(self.ok(body)["memory_per_device_bytes"]["optimizer"], 0)

    def test_the_loss_decides_the_logits_memory(self) -> None:
        body = copy.deepcopy(LLAMA_8B)
        totals = {}
        for loss in ("standard", "chunked", "fused"):
            body["training"]["loss"] = loss
            totals[loss] = self.ok(body)["memory_per_device_bytes"]["activations"]
        logits = 2048 * 128256
        self.assertEqual(totals["standard"] - totals["fused"], 16 * logits)
        self.assertEqual(totals["chunked"] - totals["fused"], 5.25 * logits)
        body["training"]["loss"] = "flash"
        self.assertIn("loss", self.post(body).json()["training"])

    def test_every_figure_has_its_range_and_fits_is_the_high_end(self) -> None:
        body = copy.deepcopy(LLAMA_8B)
        body["cost"] = {"hourly_rate_per_gpu": "2.00", "currency": "USD"}
        result = self.ok(body)
        intervals = result["intervals"]
        hours = intervals["wall_hours"]
        self.assertEqual((hours["coverage"], hours["kind"]), (0.8, "time.assumed"))
        self.assertLess(hours["low"], hours["high"])
        memory = intervals["memory_per_device_bytes"]
        self.assertEqual(memory["kind"], "memory")
        self.assertEqual(result["fits_in_memory"], memory["high"] <= result["device_memory_bytes"])
        self.assertLess(float(intervals["cost"]["low"]["amount"]), float(result["cost"]["amount"]))
        self.assertTrue(any(line.startswith("Time: ") for line in result["recommendations"]))

    def test_a_pilots_own_micro_batch_changes_what_it_carries_to_more_gpus(self) -> None:
        body = copy.deepcopy(LLAMA_8B)
        body["training"].update(method="full", micro_batch_size=8)
        body["training"].pop("lora")
        body["hardware"].update(gpu="RTX-4090", count=8, zero_stage=2)
        body["pilot"] = {"tokens_per_second": 2000, "gpus": 8}
        same = self.ok(body)["training_wall_hours"]
        body["pilot"]["micro_batch_size"] = 1  # more steps a token: more traffic at the pilot
        self.assertLess(self.ok(body)["training_wall_hours"], same)

    def test_communication_lists_each_collective_with_its_link(self) -> None:
        body = copy.deepcopy(LLAMA_8B)
        body["training"].update(method="full")
        body["training"].pop("lora")
        body["hardware"].update(gpu="H100-SXM", count=16, zero_stage=3)
        comm = self.ok(body)["communication"]
        names = {c["name"] for c in comm["collectives"]}
        self.assertIn("weights all-gather (forward)", names)
        gather = next(c for c in comm["collectives"] if c["name"].startswith("weights"))
        self.assertIn("400 Gb/s NIC per GPU", gather["link"])
        self.assertGreater(comm["scaling_efficiency"], 0.95)

    def test_experts_inside_a_node_all_to_all_over_nvlink_across_nodes_over_nics(self) -> None:
        body = copy.deepcopy(LLAMA_8B)
        body["model"].update(active_parameters=2e9, experts=64, experts_per_token=4)
        body["training"].update(method="full")
        body["training"].pop("lora")
        body["hardware"].update(gpu="H100-SXM", count=16, expert_parallel=8, zero_stage=1)

        def exposed() -> float:
            comm = self.ok(body)["communication"]
            found = next(c for c in comm["collectives"] if c["name"] == "expert all-to-all")
            return float(found["exposed_seconds_per_step"])

        inside = exposed()
        body["hardware"]["expert_parallel_placement"] = "across_nodes"
        self.assertGreater(exposed(), 3 * inside)

    def test_the_compute_optimal_split_by_llama_3s_law(self) -> None:
        answer = self.post(
            {"flops": 3.8e25, "scaling_law": "llama3"}, "/api/v1/estimates/compute-optimal/"
        )
        self.assertEqual(answer.status_code, 200, answer.content)
        result = answer.json()
        self.assertEqual(result["scaling_law"], "llama3")
        self.assertAlmostEqual(result["tokens"] / 16.55e12, 1, places=3)
        self.assertAlmostEqual(result["parameters"] / 402e9, 1, delta=0.05)
        self.assertIn("Llama 3", result["source"])
        answer = self.post(
            {"flops": 3.8e25, "scaling_law": "kaplan"}, "/api/v1/estimates/compute-optimal/"
        )
        self.assertIn("scaling_law", answer.json())

    def test_hardware_options_rows_carry_their_range(self) -> None:
        body = copy.deepcopy(LLAMA_8B)
        body["pilot"] = {"tokens_per_second": 3000, "gpu": "A100-80GB"}
        options = {o["gpu"]: o for o in self.ok(body, OPTIONS)["options"]}
        self.assertEqual(
            options["A100-80GB"]["intervals"]["wall_hours"]["kind"], "time.pilot.one_node"
        )
        self.assertEqual(
            options["H100-SXM"]["intervals"]["wall_hours"]["kind"], "time.projected.measured"
        )
        self.assertEqual(
            options["L40S"]["intervals"]["wall_hours"]["kind"], "time.projected.roofline"
        )

    def test_the_schema_states_the_new_inputs_and_their_ranges(self) -> None:
        self.client.force_login(self.planner)
        schema = self.client.get("/api/v1/schema/", headers={"Accept": "application/json"}).json()
        components = schema["components"]["schemas"]
        model = components["ModelSpecRequest"]["properties"]
        self.assertEqual(model["attention_width"]["maximum"], LIMITS["model.attention_width"][1])
        self.assertIn("architecture", model)
        self.assertIn("quantization", model)
        self.assertIn("loss", components["TrainingSpecRequest"]["properties"])
        self.assertIn("expert_parallel_placement", components["HardwareSpecRequest"]["properties"])
        self.assertIn("scaling_law", components["ComputeOptimalRequestRequest"]["properties"])
        self.assertIn("intervals", components["EstimateResult"]["properties"])


finite = st.floats(allow_nan=False, allow_infinity=False, width=64)
number = st.one_of(finite, st.integers(min_value=-(10**30), max_value=10**30))
maybe = st.one_of(st.none(), number)
shape = st.fixed_dictionaries(
    {"name": st.text(max_size=4), "in_features": number, "out_features": number},
    optional={"count": number},
)


class NoServerErrorForTheNewInputsTests(AsPlanner, HypothesisTestCase):
    """Any finite value of issue 31's inputs: a 200 or a 400 naming a field sent."""

    @FUZZ
    @given(
        targets=st.lists(
            st.one_of(st.sampled_from(["qkv", "gate_up", "q_proj", "down"]), shape), max_size=3
        ),
        architecture=st.sampled_from(["decoder", "encoder_decoder"]),
        width=maybe,
        routed=maybe,
        precision=st.sampled_from(["int4", "nf4", "bf16", None]),
        quantization=st.sampled_from(["gptq", "awq", None]),
        optimizer=st.sampled_from(["adamw_8bit", "paged_adamw", "paged_adamw_8bit", "adamw"]),
        loss=st.sampled_from(["standard", "chunked", "fused", None]),
        micro=maybe,
        placement=st.sampled_from(["intra_node", "across_nodes"]),
        count=number,
        offload=st.sampled_from(["none", "optimizer", "optimizer_and_parameters"]),
        stage=st.integers(min_value=0, max_value=3),
    )
    def test_no_finite_input_answers_500(self, **values: Any) -> None:
        body = copy.deepcopy(LLAMA_8B)
        if values["targets"]:
            body["training"]["lora"]["target_modules"] = values["targets"]
        body["model"].update(
            architecture=values["architecture"],
            attention_width=values["width"],
            experts_per_token=values["routed"],
            weight_precision=values["precision"],
            quantization=values["quantization"],
            experts=8,
            active_parameters=2e9,
        )
        body["training"].update(optimizer=values["optimizer"], loss=values["loss"])
        body["hardware"].update(
            count=values["count"],
            expert_parallel_placement=values["placement"],
            offload=values["offload"],
            zero_stage=values["stage"],
        )
        body["pilot"] = {"tokens_per_second": 3000, "micro_batch_size": values["micro"]}
        for url in (PREVIEW, OPTIONS):
            self.assert_200_or_a_400_naming_what_was_sent(self.post(body, url), body)
