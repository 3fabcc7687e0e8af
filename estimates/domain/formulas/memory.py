"""Memory per device of a training job: model states, activations, and the job's configuration.

Rule: bytes per parameter for weights, gradients and optimizer states (ZeRO paper,
Rajbhandari et al. 2020), divided by the ZeRO stage and model parallelism; activations per
Korthikanti et al. (2022); offload moves the optimizer (and at stage 3 the parameters) to the
CPU (docs/domain.md §10).
Units: bytes per device (int, rounded up: a partial byte still occupies memory).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Final

from estimates.domain.formulas.activations import (
    activation_bytes,
    is_llama_style,
    layer_activation_bytes,
    logits_bytes,
)
from estimates.domain.formulas.adapters import frozen_base_bytes, trainable_parameters
from estimates.domain.formulas.checks import (
    EstimateInputError,
    check_choice,
    positive,
    positive_int,
)
from estimates.domain.formulas.deepspeed import offloaded_placement
from estimates.domain.formulas.shape import is_encoder_decoder
from estimates.domain.formulas.specs import (
    MIXED_PRECISIONS,
    OPTIMIZERS,
    PRECISIONS,
    EstimateInput,
    ModelSpec,
)
from estimates.domain.formulas.work import memory_parameters

# The CUDA context, cuBLAS and cuDNN workspaces and the allocator's reserve that no formula
# above counts: the MXNet ResNet-50 table (§24.5) shows 380 MiB of it on CUDA 8; CUDA 12's
# context with cuBLAS workspaces is larger, 512 MiB is counted (said in the answer).
FRAMEWORK_BYTES: Final = 512 * 2**20

# -------------------------------------------------------------------------------------- memory


@dataclass(frozen=True)
class StateBytes:
    """Bytes per parameter held for weights, gradients and optimizer states."""

    weights: int
    gradients: int
    optimizer: int

    @property
    def total(self) -> int:
        return self.weights + self.gradients + self.optimizer


@dataclass(frozen=True)
class MemoryBreakdown:
    """Bytes per device."""

    weights: int
    gradients: int
    optimizer: int
    activations: int
    total: int
    # The CUDA context, cuBLAS/cuDNN workspaces and allocator reserve (FRAMEWORK_BYTES), in total.
    framework: int = 0


def model_state_bytes_per_parameter(precision: str, optimizer: str) -> StateBytes:
    """Bytes per parameter for weights, gradients and optimizer states.

    Source: Rajbhandari et al. (2020), "ZeRO: Memory Optimizations Toward Training Trillion
    Parameter Models", section 3.1: mixed-precision Adam keeps 2 (fp16/bf16 weights) + 2
    (gradients) + K=12 (fp32 master weights, momentum, variance) bytes per parameter.
    By the same accounting:

    * fp32/tf32 Adam(W): 4 + 4 + 8 (momentum, variance; the weights are the master copy).
      tf32 is a tensor-core math mode over fp32 storage.
    * SGD with momentum: mixed 2 + 2 + 8 (fp32 master + momentum); fp32 4 + 4 + 4.
    * Adafactor (Shazeer & Stern 2018) without momentum (its default, beta1=None): the factored
      second moment keeps one row and one column vector per matrix, O(r + c) instead of r*c,
      i.e. < 0.1% of the weights for hidden sizes >= 1024; counted as 0. Mixed precision keeps
      an fp32 master (4): 2 + 2 + 4; fp32: 4 + 4 + 0.
    * fp8: weights, gradients and optimizer states are kept as in bf16 mixed precision
      (Transformer-Engine-style fp8 only casts GEMM inputs; its fp8 copies are transient).
    * 8-bit AdamW (bitsandbytes; Dettmers et al. 2022, "8-bit Optimizers via Block-wise
      Quantization"): both moments in 8 bits with a constant per block of 2,048 (< 0.01 byte),
      2 bytes; mixed 2 + 2 + (4 + 2), fp32 4 + 4 + 2. Paged variants hold the same states.
    """
    check_choice(precision, PRECISIONS, "precision")
    check_choice(optimizer, OPTIMIZERS, "optimizer")
    mixed = precision in MIXED_PRECISIONS
    if optimizer in ("adamw_8bit", "paged_adamw_8bit"):
        return StateBytes(2, 2, 6) if mixed else StateBytes(4, 4, 2)
    if optimizer in ("adam", "adamw", "paged_adamw"):
        return StateBytes(2, 2, 12) if mixed else StateBytes(4, 4, 8)
    if optimizer == "sgd":
        return StateBytes(2, 2, 8) if mixed else StateBytes(4, 4, 4)
    return StateBytes(2, 2, 4) if mixed else StateBytes(4, 4, 0)


def data_parallel_degree(gpus: int, tensor_parallel: int = 1, pipeline_parallel: int = 1) -> int:
    """Data-parallel degree = GPUs / (tensor parallel x pipeline parallel), which must divide.

    Source: Narayanan et al. (2021), section 2 (n = p * t * d).
    """
    n = positive_int(gpus, "gpus")
    model_parallel = positive_int(tensor_parallel, "tensor_parallel") * positive_int(
        pipeline_parallel, "pipeline_parallel"
    )
    if n % model_parallel:
        raise EstimateInputError(
            "gpus",
            f"{n} GPUs cannot be split into tensor_parallel x pipeline_parallel = "
            f"{model_parallel} evenly",
        )
    return n // model_parallel


def memory_per_device(
    parameters: float,
    *,
    precision: str,
    optimizer: str,
    gpus: int = 1,
    zero_stage: int = 0,
    tensor_parallel: int = 1,
    pipeline_parallel: int = 1,
    activations: int = 0,
) -> MemoryBreakdown:
    """Model states per device under ZeRO and model parallelism, plus given activation bytes.

    Source: Rajbhandari et al. (2020), section 5 / figure 1: with data-parallel degree N_d,
    stage 1 (P_os) divides optimizer states by N_d, stage 2 (P_os+g) also gradients, stage 3
    (P_os+g+p) also weights. Tensor and pipeline parallelism shard the model states over
    t x p devices (Narayanan et al. 2021); N_d = gpus / (t x p).
    """
    per_param = model_state_bytes_per_parameter(precision, optimizer)
    n_d = data_parallel_degree(gpus, tensor_parallel, pipeline_parallel)
    if isinstance(zero_stage, bool) or zero_stage not in (0, 1, 2, 3):
        raise EstimateInputError("zero_stage", f"must be 0, 1, 2 or 3; got {zero_stage!r}")
    if isinstance(activations, bool) or activations < 0:
        raise EstimateInputError("activations", f"must be an int >= 0, got {activations!r}")
    shard = positive(parameters, "parameters") / (tensor_parallel * pipeline_parallel)
    weights = math.ceil(shard * per_param.weights / (n_d if zero_stage >= 3 else 1))
    gradients = math.ceil(shard * per_param.gradients / (n_d if zero_stage >= 2 else 1))
    optimizer_bytes = math.ceil(shard * per_param.optimizer / (n_d if zero_stage >= 1 else 1))
    total = weights + gradients + optimizer_bytes + activations
    return MemoryBreakdown(weights, gradients, optimizer_bytes, activations, total)


def fits_in_memory(
    breakdown: MemoryBreakdown, device_memory_bytes: int, headroom_bytes: int = 0
) -> bool:
    """Whether the per-device total, plus an optional reserve, fits in the device memory.

    Source: docs/domain.md §10 ("too much memory per device means more devices or another
    configuration"). The CUDA context and allocator fragmentation are not modelled; pass them
    as ``headroom_bytes`` to be conservative.
    """
    positive_int(device_memory_bytes, "device_memory_bytes")
    if headroom_bytes < 0:
        raise EstimateInputError("headroom_bytes", f"must be >= 0, got {headroom_bytes!r}")
    return breakdown.total + headroom_bytes <= device_memory_bytes


@dataclass(frozen=True)
class MemConfig:
    gpus: int
    zero_stage: int
    precision: str
    recompute: bool
    flash: bool
    micro_batch: int
    offload: str = "none"


def memory_config(inp: EstimateInput) -> MemConfig:
    """The memory-relevant choices of ``inp`` as given (the levers then change them)."""
    training, hardware = inp.training, inp.hardware
    return MemConfig(
        hardware.count,
        hardware.zero_stage,
        training.precision,
        training.activation_checkpointing,
        training.flash_attention,
        training.micro_batch_size,
        hardware.offload,
    )


def job_memory(inp: EstimateInput, cfg: MemConfig) -> MemoryBreakdown:
    """Bytes per device of the configured job: model states (by method, §24.2; as DeepSpeed
    places them under offload), activations (divided by context parallelism), the logits at the
    loss's peak, and the framework's own (docs/domain.md §24.2)."""
    training, hardware = inp.training, inp.hardware
    acts = _activations(inp, cfg) + logits_bytes(inp, cfg.micro_batch)
    parameters = memory_parameters(inp)
    if training.method != "full":
        return _adapter_memory(inp, cfg, parameters, acts)
    if cfg.offload != "none":
        weights, gradients = offloaded_placement(
            parameters / (hardware.tensor_parallel * hardware.pipeline_parallel),
            data_parallel_degree(cfg.gpus, hardware.tensor_parallel, hardware.pipeline_parallel),
            cfg.zero_stage,
            cfg.offload,
            largest_layer(inp.model) / hardware.tensor_parallel,
        )
        return _with_framework(weights, gradients, 0, acts)
    on_device = memory_per_device(
        parameters,
        precision=cfg.precision,
        optimizer=training.optimizer,
        gpus=cfg.gpus,
        zero_stage=cfg.zero_stage,
        tensor_parallel=hardware.tensor_parallel,
        pipeline_parallel=hardware.pipeline_parallel,
    )
    optimizer = 0 if is_paged(training.optimizer) else on_device.optimizer
    return _with_framework(on_device.weights, on_device.gradients, optimizer, acts)


def is_paged(optimizer: str) -> bool:
    """Paged optimizers keep their states in unified memory, paged to the CPU when the device
    is full: they never make a job run out of device memory (docs/domain.md §24.2)."""
    return optimizer.startswith("paged_")


def _with_framework(weights: int, gradients: int, optimizer: int, acts: int) -> MemoryBreakdown:
    total = weights + gradients + optimizer + acts + FRAMEWORK_BYTES
    return MemoryBreakdown(weights, gradients, optimizer, acts, total, FRAMEWORK_BYTES)


def _activations(inp: EstimateInput, cfg: MemConfig) -> int:
    model, hardware = inp.model, inp.hardware
    given = inp.training.activation_bytes_per_sample
    if given is not None:
        # Stated per sample for the run's own checkpointing and layout (§24.5): the micro-batch
        # is the only choice it scales with here.
        return math.ceil(given * cfg.micro_batch)
    if not (model.layers and model.hidden_size and model.attention_heads):
        return 0
    # Megatron enables sequence parallelism with tensor parallelism; assumed here. Context
    # parallelism splits the sequence: each rank keeps s / cp of it.
    local = -(-inp.training.sequence_length // hardware.context_parallel)
    if is_llama_style(inp) or is_encoder_decoder(model):
        return layer_activation_bytes(
            inp, local, cfg.micro_batch, recompute=cfg.recompute, flash=cfg.flash
        )

    def layers_of(count: int, recompute: bool) -> int:
        return activation_bytes(
            local,
            cfg.micro_batch,
            model.hidden_size or 1,
            model.attention_heads or 1,
            count,
            precision=cfg.precision,
            recompute=recompute,
            flash_attention=cfg.flash,
            tensor_parallel=hardware.tensor_parallel,
            pipeline_parallel=hardware.pipeline_parallel if count > 1 else 1,
        )

    kept = layers_of(model.layers, cfg.recompute)
    # While a layer is recomputed for its backward, its whole activations live beside the
    # checkpoints (docs/domain.md §24.2).
    return kept + layers_of(1, False) if cfg.recompute else kept


def _adapter_memory(
    inp: EstimateInput, cfg: MemConfig, parameters: float, acts: int
) -> MemoryBreakdown:
    """A frozen base at its storage precision plus the adapter's states (§24.2), sharded as the
    ZeRO stage and model parallelism shard them (ZeRO-3/FSDP shards the frozen base too)."""
    model, training, hardware = inp.model, inp.training, inp.hardware
    model_parallel = hardware.tensor_parallel * hardware.pipeline_parallel
    n_d = data_parallel_degree(cfg.gpus, hardware.tensor_parallel, hardware.pipeline_parallel)
    base = frozen_base_bytes(model, training, parameters) / model_parallel
    if cfg.offload == "optimizer_and_parameters":
        base = largest_layer(model) / hardware.tensor_parallel * 2
    elif cfg.zero_stage >= 3:
        base /= n_d
    per = model_state_bytes_per_parameter(cfg.precision, training.optimizer)
    trainable = trainable_parameters(model, training) / model_parallel
    weights = math.ceil(base + trainable * per.weights / (n_d if cfg.zero_stage >= 3 else 1))
    gradients = math.ceil(trainable * per.gradients / (n_d if cfg.zero_stage >= 2 else 1))
    optimizer = 0
    if cfg.offload == "none" and not is_paged(training.optimizer):
        optimizer = math.ceil(trainable * per.optimizer / (n_d if cfg.zero_stage >= 1 else 1))
    return _with_framework(weights, gradients, optimizer, acts)


def largest_layer(model: ModelSpec) -> float:
    if model.largest_layer_parameters is not None:
        return model.largest_layer_parameters
    if model.vocab_size and model.hidden_size:
        return float(model.vocab_size * model.hidden_size)
    return 0.0
