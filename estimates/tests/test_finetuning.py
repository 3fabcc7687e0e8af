"""Fine-tuning, experts, long context, any architecture and interconnect (issue 17): published
figures reproduced by estimates.domain.formulas (no database). docs/domain.md §24."""

from __future__ import annotations

import pytest

from catalog.domain.catalog import GIB
from estimates.domain.formulas import (
    EstimateInput,
    EstimateInputError,
    HardwareSpec,
    ModelSpec,
    PilotSpec,
    TrainingSpec,
    estimate,
)
from estimates.domain.formulas.adapters import bits_per_weight, lora_parameters_per_layer
from estimates.domain.formulas.communication import all_reduce_seconds, bus_bandwidth
from estimates.domain.formulas.specs import LoraSpec

ALL = ("q", "k", "v", "o", "gate", "up", "down")
# Llama 3.1 8B (its config.json): 32 layers, h 4096, MLP 14336, 32 heads, 8 KV heads, V 128256.
LLAMA31_8B = {
    "parameters": 8.03e9,
    "layers": 32,
    "hidden_size": 4096,
    "attention_heads": 32,
    "key_value_heads": 8,
    "intermediate_size": 14336,
    "vocab_size": 128256,
}
# Llama 2 70B: 80 layers, h 8192, MLP 28672, 64 heads, 8 KV heads, V 32000; 68.98B parameters.
LLAMA2_70B = {
    "parameters": 68.98e9,
    "layers": 80,
    "hidden_size": 8192,
    "attention_heads": 64,
    "key_value_heads": 8,
    "intermediate_size": 28672,
    "vocab_size": 32000,
}


def run(model: dict, training: dict, hardware: dict, pilot: PilotSpec | None = None):
    return estimate(
        EstimateInput(
            model=ModelSpec(**model),
            training=TrainingSpec(**training),
            hardware=HardwareSpec(**hardware),
            pilot=pilot,
        )
    )


# ------------------------------------------------------------------ §24.1 trainable parameters


def test_peft_prints_4194304_for_lora_r8_on_q_and_v_of_llama_2_7b() -> None:
    # PEFT docs/README: "trainable params: 4,194,304 || all params: 6,742,609,920".
    per_layer = lora_parameters_per_layer(8, ("q", "v"), 4096, 11008, 32, 32)
    assert per_layer * 32 == 4_194_304


def test_peft_prints_3407872_for_lora_r8_on_q_and_v_of_llama_3_8b_with_grouped_query() -> None:
    # PEFT on Meta-Llama-3-8B, r=8, q_proj + v_proj: "trainable params: 3,407,872"; v maps
    # 4096 -> 8 KV heads x 128 = 1024 (grouped-query attention).
    assert lora_parameters_per_layer(8, ("q", "v"), 4096, 14336, 32, 8) * 32 == 3_407_872


def test_peft_readme_prints_2359296_for_mt0_large() -> None:
    # PEFT README: bigscience/mt0-large, r=8 on q, v: "trainable params: 2359296". mt0-large
    # (T5, d_model 1024) has 72 attention blocks: 24 encoder self, 24 decoder self, 24 cross.
    assert lora_parameters_per_layer(8, ("q", "v"), 1024, 2816, 16, 16) * 72 == 2_359_296


def test_qlora_guanaco_7b_all_linear_r64_trains_159907840_parameters() -> None:
    # QLoRA repository (qlora.py, LLaMA-7B, r=64 on every linear layer) prints
    # "trainable params: 159907840".
    assert lora_parameters_per_layer(64, ALL, 4096, 11008, 32, 32) * 32 == 159_907_840


def test_the_estimate_reports_the_adapter_count_and_its_checkpoint() -> None:
    result = run(
        LLAMA31_8B,
        {"tokens": 1e6, "method": "lora", "lora": LoraSpec(8, ("q", "v"))},
        {"gpu": "RTX-4090"},
    )
    assert result.trainable_parameters == 3_407_872
    assert result.checkpoint_adapter_bytes == 2 * 3_407_872  # 16-bit, as PEFT saves them


# ------------------------------------------------------------------------ §24.2 memory


def test_nf4_with_double_quant_stores_4_127_bits_per_weight() -> None:
    # QLoRA paper, section 3: constants cost 32/64 = 0.5 bit; double quantization
    # 8/64 + 32/(64 x 256) = 0.127 bit.
    assert bits_per_weight("nf4", False) == 4.5
    assert bits_per_weight("nf4", True) == pytest.approx(4.127, abs=1e-3)


def test_full_fine_tuning_of_the_same_job_needs_over_three_times_the_lora_memory() -> None:
    # Issue 17: every fine-tuning answer was 5-28x too high when counted as full training.
    adapter = {"method": "lora", "lora": LoraSpec(8), "activation_checkpointing": True}
    job = {"tokens": 1e6, "sequence_length": 2048, "micro_batch_size": 2}
    lora = run(LLAMA31_8B, {**job, **adapter, "flash_attention": True}, {"gpu": "RTX-4090"})
    full = run(
        LLAMA31_8B,
        {"tokens": 1e6, "sequence_length": 2048, "micro_batch_size": 2},
        {"gpu": "RTX-4090"},
    )
    assert full.memory.total > 3 * lora.memory.total
    assert not full.fits_in_memory


# ------------------------------------------------------------------------ §24.1 FLOPs and MFU


def test_a_published_lora_mfu_nemo_llama_2_70b_on_8_h100_within_10_percent() -> None:
    # NVIDIA NeMo performance summary (24.07, DGX-H100, FP8): LLAMA2-70B LoRA, 8 GPUs, TP 2,
    # PP 4, packed 4096: 2,557 tokens/s/GPU at 705 model TFLOP/s/GPU, i.e. 705 / 1,979 = 35.6%
    # MFU. Ours counts 4N + 6T + causal attention per token; within 10%.
    result = run(
        LLAMA2_70B,
        {
            "tokens": 1e9,
            "sequence_length": 4096,
            "method": "lora",
            "lora": LoraSpec(16, ("q", "k", "v", "o")),
            "precision": "fp8",
        },
        {"gpu": "H100-SXM", "count": 8, "tensor_parallel": 2, "pipeline_parallel": 4},
        PilotSpec(tokens_per_second=2557 * 8, gpus=8),
    )
    assert result.mfu == pytest.approx(705 / 1979, rel=0.10)
    assert result.mfu < 0.4  # 6N per token would read it as 53%


def test_a_published_moe_mfu_qwen3_30b_a3b_on_16_h100_within_10_percent() -> None:
    # NeMo Megatron-Bridge performance summary (25.09, DGX-H100, FP8-CS): Qwen3-30B-A3B, 16 GPUs,
    # PP 2, EP 8, sequence 4096: 10,494 tokens/s/GPU at 241 model TFLOP/s/GPU (12.2% of 1,979).
    # Qwen3-30B-A3B: 30.5B parameters, 3.3B active, 128 experts, 48 layers, h 2048.
    result = run(
        {
            "parameters": 30.5e9,
            "active_parameters": 3.3e9,
            "experts": 128,
            "layers": 48,
            "hidden_size": 2048,
            "attention_heads": 32,
            "key_value_heads": 4,
            "vocab_size": 151936,
        },
        {"tokens": 1e9, "sequence_length": 4096, "precision": "fp8"},
        {"gpu": "H100-SXM", "count": 16, "pipeline_parallel": 2, "expert_parallel": 8},
        PilotSpec(tokens_per_second=10494 * 16),
    )
    assert result.mfu == pytest.approx(241 / 1979, rel=0.10)


def test_experts_count_flops_from_the_active_and_memory_from_all_parameters() -> None:
    # DeepSeek-V3 technical report: 671B total, 37B activated per token.
    model = {"parameters": 671e9, "active_parameters": 37e9, "experts": 256}
    result = run(model, {"tokens": 1e9}, {"gpu": "H100-SXM", "count": 64, "expert_parallel": 64})
    assert result.training_flops == pytest.approx(6 * 37e9 * 1e9)
    dense = run({"parameters": 37e9}, {"tokens": 1e9}, {"gpu": "H100-SXM", "count": 64})
    assert result.memory.weights > dense.memory.weights  # the other experts are held somewhere
    assert result.memory.weights < 2 * (37e9 + 634e9 / 64) + 1


# ------------------------------------------------------------------------ §24.4 long context


def nemo_llama3_flops_per_token(s: int) -> float:
    # NeMo's own accounting (nemo/utils/flops_formulas.py, llama3): L h^2 (12 + 12 g/a +
    # 18 f/h + 12 s/h + 6 V/(L h)), used to turn its TFLOP/s table into tokens/s.
    layers, h, g, a, f, v = 32, 4096, 8, 32, 14336, 128256
    return layers * h * h * (12 + 12 * g / a + 18 * f / h + 12 * s / h + 6 * v / (layers * h))


def test_a_pilot_at_8k_rescaled_to_128k_matches_nemos_context_parallel_table() -> None:
    # NeMo long-sequence performance (LLAMA3-8B, FP8, DGX-B200): 1,671 TFLOP/s/GPU at 8K
    # (2 GPUs), 1,588 at 128K (32 GPUs, TP 2, CP 4). As tokens/s/GPU (NeMo's own accounting),
    # the 128K run is 4.56x slower per token. Reusing the 8K pilot unchanged is that wrong;
    # the rescale is within 10% (the table's own TFLOP/s vary by 4% across lengths, and the
    # ring's communication is not in the rescale).
    at_8k = 1671e12 / nemo_llama3_flops_per_token(8192)
    at_128k = 1588e12 / nemo_llama3_flops_per_token(131072)
    result = run(
        LLAMA31_8B,
        {"tokens": 1e10, "sequence_length": 131072, "precision": "fp8"},
        {"gpu": "B200", "count": 32, "tensor_parallel": 2, "context_parallel": 4},
        PilotSpec(tokens_per_second=at_8k * 32, gpus=32, sequence_length=8192),
    )
    predicted = 1e10 / (result.training_wall_hours * 3600) / 32
    assert predicted == pytest.approx(at_128k, rel=0.10)
    assert at_8k / at_128k > 4


# ------------------------------------------------------------------------ §24.5 any architecture


def test_resnet_50_trains_at_3_x_4_1_gflops_per_image() -> None:
    # He et al. (2016) / torchvision: ResNet-50 forward 4.1 GFLOPs per 224x224 image; backward
    # twice the forward: 12.3 GFLOPs per image; ImageNet-1k, 1,281,167 images x 90 epochs.
    result = run(
        {"parameters": 25.6e6},
        {"samples": 1_281_167, "epochs": 90, "flops_per_sample": 4.1e9, "precision": "fp32"},
        {"gpu": "V100-32GB", "count": 8},
    )
    assert result.training_flops == pytest.approx(3 * 4.1e9 * 1_281_167 * 90)
    assert not result.activations_counted


def test_flops_per_sample_needs_samples() -> None:
    with pytest.raises(EstimateInputError) as caught:
        run({"parameters": 1e6}, {"tokens": 1e6, "flops_per_sample": 1e9}, {"gpu": "T4"})
    assert caught.value.field == "training.samples"


# ------------------------------------------------------------------------ §24.6 interconnect


def test_an_all_reduce_takes_what_nccl_tests_measure_at_its_bus_bandwidth() -> None:
    # nccl-tests all_reduce_perf, 16 H100 on two A3 Mega nodes, 8 GiB float: 47,535 us,
    # algbw 180.71 GB/s, busbw 338.82 GB/s. busbw = algbw x 2 (n - 1) / n, t = S x 2 (n-1)/n / B.
    assert bus_bandwidth(180.71e9, 16) == pytest.approx(338.82e9, rel=1e-4)
    assert all_reduce_seconds(8_589_934_592, 16, 338.82e9) == pytest.approx(47_535e-6, rel=1e-3)


def test_eight_pcie_rtx_4090s_scale_worse_than_eight_nvlink_h100s() -> None:
    job = {"tokens": 1e8, "sequence_length": 2048}
    pcie = run(LLAMA31_8B, job, {"gpu": "RTX-4090", "count": 8, "zero_stage": 3})
    nvlink = run(LLAMA31_8B, job, {"gpu": "H100-SXM", "count": 8, "zero_stage": 3})
    assert pcie.communication is not None and nvlink.communication is not None
    assert pcie.communication.scaling_efficiency < 0.8
    assert nvlink.communication.scaling_efficiency > pcie.communication.scaling_efficiency


# ------------------------------------------------------------------------ §24.8 serving


def test_opt_13b_keeps_800_kb_of_kv_cache_per_token() -> None:
    # Kwon et al. (2023), PagedAttention, section 3: OPT-13B, 2 (K, V) x 40 layers x 5120 x
    # 2 bytes = 800 KB per token.
    from estimates.domain.formulas import kv_cache_bytes

    assert kv_cache_bytes(40, 40, 128, 1, 1) == 819_200


def test_a_million_output_tokens_cost_the_hours_they_take() -> None:
    from decimal import Decimal

    from estimates.domain.formulas import cost_per_million_tokens, gpus_per_replica

    # 1e6 tokens at 1,000 tokens/s = 1/3.6 h at 3.60 USD per hour = 1.00 USD.
    assert cost_per_million_tokens(Decimal("3.60"), 1000) == Decimal("1.00")
    # 70B in bf16 (140 GB) plus 20 GiB of cache on 80 GiB H100s at 90%: 3 GPUs per replica.
    assert gpus_per_replica(140_000_000_000, 20 * GIB, 80 * GIB) == 3
