"""Planning decisions against published runs: does it fit (at the memory range's high end), which
card it needs, what a mixture-of-experts saves, the compute-optimal size, a fused adapter's count
(docs/domain.md §24.1-§24.3, §24.12, §24.13)."""

from __future__ import annotations

from typing import Any

from estimates.domain.formulas.adapters import trainable_parameters
from estimates.domain.formulas.scaling import compute_optimal
from estimates.domain.formulas.specs import LoraSpec, ModelSpec, TrainingSpec
from estimates.tests.published.cases import Case, run
from estimates.tests.published.communication import LLAMA_65B
from estimates.tests.published.memory import LLAMA31_8B, LLAMA33_70B, UNSLOTH, hf_qlora

DEEPSPEED = (
    "DeepSpeed, docs/_tutorials/zero-offload.md (deepspeed.ai/tutorials/zero-offload): a 10B "
    "GPT-2 (50 layers, hidden 4,096, 32 heads, batch 10, activation checkpointing) trained with "
    "ZeRO-Offload (stage 2, optimizer on the CPU) on one 32 GB V100"
)
QLORA = (
    "Dettmers et al. (2023), QLoRA, abstract and appendix (https://arxiv.org/abs/2305.14314): a "
    "65B model finetuned on a single 48 GB GPU (NF4 with double quantization, LoRA r=64 on every "
    "linear layer, sequence 512, gradient checkpointing, paged AdamW)"
)
DEEPSEEK_V2 = (
    "DeepSeek-AI (2024), DeepSeek-V2, section 3.2.3 (https://arxiv.org/abs/2405.04434): on the "
    "H800 cluster, 300.6K GPU-hours per trillion tokens for DeepSeek 67B, 172.8K for DeepSeek-V2 "
    "(236B, 21B active, 16-way pipeline, 8-way expert parallelism, ZeRO-1): 42.5% saved"
)
LLAMA3 = (
    "Dubey et al. (2024), The Llama 3 Herd of Models, section 3.2.1 (https://arxiv.org/abs/"
    "2407.21783): the scaling law extrapolated to 3.8e25 FLOPs gives 402B parameters on 16.55T "
    "tokens"
)


def _fits(result: Any) -> float:
    return 1.0 if result.fits_in_memory else 0.0


def _offload_10b() -> Any:
    return run(
        {
            "parameters": 10.3e9,
            "layers": 50,
            "hidden_size": 4096,
            "attention_heads": 32,
            "vocab_size": 50257,
        },
        {
            "tokens": 1e9,
            "sequence_length": 1024,
            "micro_batch_size": 10,
            "activation_checkpointing": True,
            "precision": "fp16",
            # Megatron's vocab-parallel loss keeps the fp32 softmax and takes its gradient in
            # place: about 6 bytes a logit, our chunked figure (5.25).
            "loss": "chunked",
        },
        {"gpu": "V100-32GB", "zero_stage": 2, "offload": "optimizer"},
    )


def _qlora_65b() -> Any:
    return run(
        {**LLAMA_65B, "double_quant": True},
        {
            "tokens": 1e6,
            "sequence_length": 512,
            "method": "qlora",
            "lora": LoraSpec(64),
            "activation_checkpointing": True,
            "optimizer": "paged_adamw",
        },
        {"gpu": "L40S"},
    )


def _deepseek(model: dict[str, Any], utilization: float, expert_parallel: int = 1) -> float:
    hardware = {"gpu": "H800", "count": 1024, "pipeline_parallel": 16, "zero_stage": 1}
    training = {"tokens": 1e12, "sequence_length": 4096, "gradient_accumulation_steps": 144}
    result = run(
        model,
        training,
        {**hardware, "utilization": utilization, "expert_parallel": expert_parallel},
    )
    return result.gpu_hours


DENSE_67B = {
    "parameters": 67e9,
    "layers": 95,
    "hidden_size": 8192,
    "attention_heads": 64,
    "key_value_heads": 8,
    "intermediate_size": 22016,
    "vocab_size": 102400,
}
V2 = {
    "parameters": 236e9,
    "active_parameters": 21e9,
    "layers": 60,
    "hidden_size": 5120,
    "attention_heads": 128,
    "intermediate_size": 1536,
    "experts": 160,
    "experts_per_token": 6,
    "vocab_size": 102400,
}


def _deepseek_v2() -> float:
    """The dense model's utilization read from its own 300.6K GPU-hours (an anchor), the MoE at
    the same utilization with its expert all-to-alls on the node's NVLink."""
    at_default = _deepseek(DENSE_67B, 0.4)
    utilization = 0.4 * at_default / 300.6e3
    return _deepseek(V2, utilization, expert_parallel=8)


PHI3_MINI = ModelSpec(
    parameters=3.821e9, layers=32, hidden_size=3072, attention_heads=32, intermediate_size=8192
)

CASES: tuple[Case, ...] = (
    Case(
        "deepspeed-zero-offload-10b-fits-one-v100",
        "check",
        f"{DEEPSPEED}: it fits",
        1.0,
        lambda: _fits(_offload_10b()),
        0.0,
        "fits at the memory range's high end (16-bit kind) as the tutorial ran it",
    ),
    Case(
        "deepspeed-zero-offload-10b-block-is-the-memory",
        "check",
        f"{DEEPSPEED}: DeepSpeed's estimator keeps 2P of 16-bit weights on the GPU",
        2 * 10.3e9,
        lambda: float(_offload_10b().deepspeed.per_gpu_bytes),
        0.001,
        "the deepspeed block and the memory per device are one computation (issue 31)",
    ),
    Case(
        "qlora-65b-fits-one-48gb-gpu",
        "check",
        f"{QLORA}: it fits",
        1.0,
        lambda: _fits(_qlora_65b()),
        0.0,
        "fits a 48 GiB card (L40S) at the quantized memory range's high end",
    ),
    Case(
        "unsloth-hf-qlora-70b-8k-does-not-fit-80gb",
        "check",
        f"{UNSLOTH}: Llama 3.3 70B fits 6,916 tokens on 80 GB, so not 8,192",
        0.0,
        lambda: _fits(hf_qlora(LLAMA33_70B, 8192)),
        0.0,
        "issue 31: a 70B QLoRA at 8k tokens was said to fit an 80 GB card",
    ),
    Case(
        "unsloth-hf-qlora-8b-16k-needs-an-80gb-card",
        "check",
        f"{UNSLOTH}: Llama 3.1 8B fits 15,502 tokens on 48 GB and 28,454 on 80 GB",
        1.0,
        lambda: (
            _fits(hf_qlora(LLAMA31_8B, 16384, "A100-80GB"))
            - _fits(hf_qlora(LLAMA31_8B, 16384, "L40S"))
            - _fits(hf_qlora(LLAMA31_8B, 16384, "RTX-4090"))
        ),
        0.0,
        "issue 31: a 16k QLoRA put the 24 GB RTX 4090 first: it needs the 80 GB card",
    ),
    Case(
        "deepseek-v2-gpu-hours-per-trillion-tokens",
        "check",
        f"{DEEPSEEK_V2}: 172.8K GPU-hours",
        172.8e3,
        _deepseek_v2,
        0.35,
        "the routed experts' small matmuls (1,536 wide) run below the dense model's utilization, "
        "which no input states (ours 121K: it saves 60%, the report 42.5%); the 1.7x of the "
        "single-NIC model is gone",
    ),
    Case(
        "llama3-law-tokens-at-3-8e25",
        "check",
        f"{LLAMA3}: 16.55T tokens",
        16.55e12,
        lambda: compute_optimal("llama3", flops=3.8e25).tokens,
        0.001,
        "anchor: the law's coefficient is read from this point (the printed A = 0.29 gives 10.5T)",
        anchor=True,
    ),
    Case(
        "llama3-law-parameters-at-3-8e25",
        "check",
        f"{LLAMA3}: 402B parameters",
        402e9,
        lambda: compute_optimal("llama3", flops=3.8e25).parameters,
        0.05,
        "the paper's own figures disagree by 5%: 6 x 402B x 16.55T = 4.0e25, not 3.8e25",
    ),
    Case(
        "peft-phi-3-mini-fused-targets-r16",
        "check",
        "PEFT print_trainable_parameters for microsoft/phi-3-mini-4k-instruct, LoRA r=16 on "
        "qkv_proj, o_proj, gate_up_proj, down_proj: 'trainable params: 25,165,824 || all params: "
        "3,846,245,376' (python-docstring-generator README, as printed)",
        25_165_824,
        lambda: trainable_parameters(
            PHI3_MINI,
            TrainingSpec(
                tokens=1.0,
                method="lora",
                lora=LoraSpec(16, ("qkv", "o", "gate_up", "down")),
            ),
        ),
        0.0,
        "exact: one A over the fused input; counted as q, k, v, gate and up it is 19% more",
    ),
)
