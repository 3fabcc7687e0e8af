"""The estimate's input: one frozen dataclass per object of the preview body, and its vocabulary.

Rule: the field names are the API's (POST /estimates/preview/, docs/api.md); defaults are the
documented ones. Validation lives in ``validation``.
Units: parameters and tokens as counts, hours, fractions of peak, ``Decimal`` money.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Final

from catalog.domain.catalog import GpuModel
from estimates.domain.formulas.time import Overheads

PRECISIONS: Final = ("fp32", "tf32", "bf16", "fp16", "fp8")
# bitsandbytes' 8-bit AdamW (block-wise quantized moments) and the paged variants, whose states
# live in unified memory and page out to the CPU instead of failing (docs/domain.md §24.2).
OPTIMIZERS: Final = (
    "adamw",
    "adam",
    "sgd",
    "adafactor",
    "adamw_8bit",
    "paged_adamw",
    "paged_adamw_8bit",
)
MIXED_PRECISIONS: Final = frozenset({"bf16", "fp16", "fp8"})


OFFLOADS: Final = ("none", "optimizer", "optimizer_and_parameters")
UTILIZATION_KINDS: Final = ("hfu", "mfu")
# docs/domain.md §24.1: full fine-tuning (or pre-training) and the two adapter methods.
METHODS: Final = ("full", "lora", "qlora")
# How the (frozen) base weights are stored (§24.2); nf4/fp4 are bitsandbytes' 4-bit types.
# int4 is GPTQ's or AWQ's group-wise format (``model.quantization``).
WEIGHT_PRECISIONS: Final = ("fp32", "bf16", "fp16", "fp8", "int8", "int4", "nf4", "fp4")
QUANTIZATIONS: Final = ("gptq", "awq")
# PEFT's short names for a decoder layer's linear modules (§24.1).
TARGET_MODULES: Final = ("q", "k", "v", "o", "gate", "up", "down")
# Fused projections (Phi-3, many GPTQ checkpoints): one adapter over q, k, v together and one
# over gate and up together.
FUSED_MODULES: Final = ("qkv", "gate_up")
# Hugging Face's module names, accepted for the short ones.
MODULE_ALIASES: Final = {
    "q_proj": "q",
    "k_proj": "k",
    "v_proj": "v",
    "o_proj": "o",
    "gate_proj": "gate",
    "up_proj": "up",
    "down_proj": "down",
    "qkv_proj": "qkv",
    "gate_up_proj": "gate_up",
}
# docs/domain.md §24.5: a decoder-only transformer, or an encoder-decoder (T5) whose
# ``layers`` is each stack's depth.
ARCHITECTURES: Final = ("decoder", "encoder_decoder")
# docs/domain.md §24.2: how the loss meets the logits.
LOSSES: Final = ("standard", "chunked", "fused")
EXPERT_PLACEMENTS: Final = ("intra_node", "across_nodes")


# ------------------------------------------------------------------------ the estimate endpoint


@dataclass(frozen=True)
class ModelSpec:
    """API ``model``: parameter count; architecture fields are optional."""

    parameters: float
    layers: int | None = None
    hidden_size: int | None = None
    attention_heads: int | None = None
    vocab_size: int | None = None
    # DeepSpeed's ZeRO-3 estimate needs it; default vocab_size x hidden_size (the embedding).
    largest_layer_parameters: float | None = None
    # The MLP width (gate/up/down) and grouped-query attention's key/value heads, for the
    # adapter count (§24.1); default 4 x hidden_size and attention_heads.
    intermediate_size: int | None = None
    key_value_heads: int | None = None
    # How the base is stored (§24.2): None = the training precision (nf4 for qlora).
    weight_precision: str | None = None
    double_quant: bool = False
    # Mixture-of-experts (§24.3): FLOPs from the active count, memory from all parameters.
    active_parameters: float | None = None
    experts: int | None = None
    # The experts each token is routed to (top-k), for the all-to-all's bytes (§24.3).
    experts_per_token: int | None = None
    # §24.5: "decoder" or "encoder_decoder"; the attention's q/o width when it is not the
    # hidden size (Gemma: 16 heads of 256 on a 3072-wide model); GPTQ/AWQ for int4 weights.
    architecture: str = "decoder"
    attention_width: int | None = None
    quantization: str | None = None


@dataclass(frozen=True)
class ModuleShape:
    """A linear module the adapter targets, given by its shape: ``count`` of them per layer."""

    name: str
    in_features: int
    out_features: int
    count: int = 1


@dataclass(frozen=True)
class LoraSpec:
    """API ``training.lora``: the adapter rank and the modules it is applied to."""

    rank: int = 16
    target_modules: str | tuple[str | ModuleShape, ...] = "all-linear"


@dataclass(frozen=True)
class TrainingSpec:
    """API ``training``: ``tokens``, or ``samples`` + ``tokens_per_sample`` (per epoch)."""

    tokens: float | None = None
    samples: float | None = None
    tokens_per_sample: float | None = None
    epochs: float = 1.0
    sequence_length: int = 2048
    micro_batch_size: int = 1
    precision: str = "bf16"
    optimizer: str = "adamw"
    activation_checkpointing: bool = False
    # Not in docs/api.md's example: FlashAttention-style kernels do not store the s x s scores.
    flash_attention: bool = False
    method: str = "full"
    lora: LoraSpec | None = None
    # The trainable count given directly; overrides the one computed from the shape.
    trainable_parameters: float | None = None
    # Forward FLOPs of one sample, for models that are not transformers (§24.5).
    flops_per_sample: float | None = None
    # Logits memory (§24.2): "standard" (about 16 bytes a logit), "chunked", "fused"; None
    # reads ``chunked_loss`` (true: chunked), else standard.
    loss: str | None = None
    chunked_loss: bool | None = None
    # Activation bytes one sample keeps for the backward pass on a device, as measured or
    # published (§24.5): for models the transformer formula does not describe (CNNs, LSTMs).
    activation_bytes_per_sample: float | None = None
    # Micro-batches per optimizer step (§24.10): memory follows the micro-batch, the optimizer
    # step and the gradient all-reduce the global batch (micro x accumulation x data parallel).
    gradient_accumulation_steps: int = 1


@dataclass(frozen=True)
class HardwareSpec:
    """API ``hardware``; ``gpu`` is a catalogue entry or its name."""

    gpu: GpuModel | str
    count: int = 1
    utilization: float = 0.4
    zero_stage: int = 0
    tensor_parallel: int = 1
    pipeline_parallel: int = 1
    # "hfu": hardware FLOPs including recomputation (the default); "mfu": model FLOPs only.
    utilization_kind: str = "hfu"
    offload: str = "none"
    gpus_per_node: int | None = None
    expert_parallel: int = 1
    context_parallel: int = 1
    # Expert groups inside a node first (default), or one expert rank per node (§24.6).
    expert_parallel_placement: str = "intra_node"


@dataclass(frozen=True)
class EnergySpec:
    """API ``energy``: data-centre PUE, grid emissions and, optionally, the board power."""

    pue: float
    grid_kg_co2_per_kwh: float
    tdp_watts: float | None = None


@dataclass(frozen=True)
class ReliabilitySpec:
    """API ``reliability``: checkpoint write time, and the job's MTBF or observed interruptions
    (``interruptions_count`` over ``interruptions_days``)."""

    checkpoint_write_seconds: float
    mtbf_hours: float | None = None
    interruptions_count: int | None = None
    interruptions_days: float | None = None


@dataclass(frozen=True)
class PilotSpec:
    """API ``pilot``: whole-pilot throughput and the GPUs it ran on (None: hardware.count)."""

    tokens_per_second: float | None = None
    samples_per_second: float | None = None
    gpus: int | None = None
    # The sequence length the pilot ran at (None: the training's); §24.4 rescales between them.
    sequence_length: int | None = None
    # The pilot's own micro-batch (None: the training's): its step's communication is counted
    # at it when carrying the pilot to the run (§24.6).
    micro_batch_size: int | None = None


@dataclass(frozen=True)
class CostSpec:
    """API ``cost``: hourly rate per GPU, currency and stated extra costs."""

    hourly_rate_per_gpu: Decimal
    currency: str = "USD"
    extra: Decimal = Decimal("0.00")


@dataclass(frozen=True)
class EstimateInput:
    """The body of POST /api/v1/estimates/preview/."""

    model: ModelSpec
    training: TrainingSpec
    hardware: HardwareSpec
    pilot: PilotSpec | None = None
    overheads: Overheads | None = None
    cost: CostSpec | None = None
    energy: EnergySpec | None = None
    reliability: ReliabilitySpec | None = None


def tokens_per_epoch(training: TrainingSpec) -> float:
    if training.tokens is not None:
        return training.tokens
    if training.samples is None or training.tokens_per_sample is None:
        # A non-transformer given by FLOPs per sample (§24.5): no token count.
        return 0.0
    return training.samples * training.tokens_per_sample


def samples_per_epoch(training: TrainingSpec) -> float:
    if training.samples is not None:
        return training.samples
    # Token counts without a sample count: assume packed sequences of sequence_length tokens.
    return tokens_per_epoch(training) / training.sequence_length


def lora_spec(lora: Mapping[str, Any]) -> LoraSpec:
    """``training.lora`` as checked by the serializers: names, or shapes as objects."""
    targets = lora.get("target_modules", "all-linear")
    if not isinstance(targets, str):
        targets = tuple(
            ModuleShape(
                name=str(t["name"]),
                in_features=t["in_features"],
                out_features=t["out_features"],
                count=t.get("count", 1),
            )
            if isinstance(t, Mapping)
            else MODULE_ALIASES.get(t, t)
            for t in targets
        )
    return LoraSpec(rank=lora.get("rank", 16), target_modules=targets)


def input_from_spec(
    spec: Mapping[str, Any],
    gpu: GpuModel | str,
    pilot: PilotSpec | None = None,
    work: Mapping[str, Any] | None = None,
) -> EstimateInput:
    """The estimate's input from a planned item's ``estimate_spec`` (docs/domain.md §24.9): the
    preview's JSON objects, already checked by its serializers; ``gpu`` is the item's, and the
    item's ``work`` (tokens or samples, epochs, GPUs) fills what the spec leaves out."""
    model = dict(spec.get("model") or {})
    training = dict(spec.get("training") or {})
    work = work or {}
    if not any(training.get(k) is not None for k in ("tokens", "samples")):
        for name in ("tokens", "samples", "tokens_per_sample", "epochs"):
            if work.get(name) is not None:
                training[name] = work[name]
    lora = training.pop("lora", None)
    if isinstance(lora, Mapping):
        training["lora"] = lora_spec(lora)
    hardware = {
        k: v for k, v in dict(spec.get("hardware") or {}).items() if k not in ("gpu", "custom")
    }
    return EstimateInput(
        model=ModelSpec(**model),
        training=TrainingSpec(**training),
        hardware=HardwareSpec(gpu=gpu, **hardware),
        pilot=pilot,
    )
