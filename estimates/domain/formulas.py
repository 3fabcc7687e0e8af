"""Compute, time, memory and cost estimates for training campaigns.

Rules
-----
* Pure module: no Django, no I/O, no clock. Functions take and return float / int / Decimal and
  frozen dataclasses; the REST view (POST /api/v1/estimates/preview/) calls ``estimate`` directly.
* Every formula names its source in its docstring.
* Invalid input raises ``EstimateInputError`` (a ValueError) whose ``field`` names the offending
  argument; ``estimate`` uses the API's dotted names ("hardware.utilization",
  "model.parameters").

Units
-----
* FLOPs: floating-point operations (float). Peak figures are dense FLOP/s of one GPU.
* Time: hours (float). Wall hours are calendar hours of the whole job; GPU-hours are wall hours
  times the GPUs it holds (what hourly rental bills).
* Memory: bytes per device (int). Fractional bytes are rounded up: a partial byte still occupies
  memory. "GiB" in messages is 2**30 bytes.
* Money: ``decimal.Decimal``, never float. Float hours are converted through their shortest
  decimal repr (``str``), so 1.1 hours is 1.1, not 1.100000000000000088817841970012523; each
  cost is quantized once, at the end, to cents with ROUND_HALF_UP. No tax or transfer cost is
  ever added unless the caller passes it as ``extra``.
* Utilization: fraction of the GPU's peak FLOP/s actually delivered, in (0, 1].
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from decimal import ROUND_HALF_UP, Decimal
from fractions import Fraction
from types import MappingProxyType
from typing import Final, Literal

from catalog.domain.catalog import GIB, GpuModel, get_gpu

__all__ = [
    "CHINCHILLA_TOKENS_PER_PARAMETER",
    "HOURS_PER_MONTH",
    "KAPLAN_ALPHA_DATA",
    "KAPLAN_ALPHA_PARAMETERS",
    "LIMITS",
    "MAX_AMOUNT",
    "OFFLOADS",
    "OPTIMIZERS",
    "PRECISIONS",
    "RECOMPUTE_FLOPS_FACTOR",
    "UTILIZATION_KINDS",
    "AmountOverflowError",
    "Checkpointing",
    "ComputeOptimal",
    "CostSpec",
    "DeepSpeedMemory",
    "Energy",
    "EstimateInput",
    "EstimateInputError",
    "EstimateResult",
    "HardwareSpec",
    "InferenceProjection",
    "Lever",
    "LocalServing",
    "MemoryBreakdown",
    "ModelSpec",
    "Money",
    "Overheads",
    "PilotSpec",
    "ScalingLever",
    "ServingProjection",
    "StateBytes",
    "TimeEstimate",
    "TrainingSpec",
    "activation_bytes",
    "break_even_months",
    "checkpoint_size_bytes",
    "checkpointing",
    "chinchilla_fit",
    "chinchilla_optimal",
    "daly_interval",
    "daly_wall_time",
    "data_parallel_degree",
    "deepspeed_model_states_bytes",
    "deepspeed_zero_memory",
    "energy_use",
    "estimate",
    "fits_in_memory",
    "gpu_hours",
    "hourly_cost",
    "inference_flops",
    "inference_projection",
    "kaplan_loss_ratio",
    "lot_cost",
    "lower_precision",
    "memory_per_device",
    "model_flops_per_token",
    "model_state_bytes_per_parameter",
    "narayanan_flops_per_iteration",
    "narayanan_training_flops",
    "overhead_hours",
    "pilot_wall_hours",
    "scaled_amount",
    "scaling_levers",
    "serving_projection",
    "time_from_flops",
    "time_from_pilot",
    "training_flops",
    "wall_hours",
    "young_interval",
]

PRECISIONS: Final = ("fp32", "tf32", "bf16", "fp16", "fp8")
OPTIMIZERS: Final = ("adamw", "adam", "sgd", "adafactor")
_MIXED: Final = frozenset({"bf16", "fp16", "fp8"})
# Narayanan et al. (2021): 96 / 72, i.e. full recomputation adds one forward pass to 3.
RECOMPUTE_FLOPS_FACTOR: Final = 4.0 / 3.0
KAPLAN_ALPHA_PARAMETERS: Final = 0.076
KAPLAN_ALPHA_DATA: Final = 0.095
CHINCHILLA_TOKENS_PER_PARAMETER: Final = 20.0
_CENT: Final = Decimal("0.01")
# The largest money amount computed (a quadrillion): quantizing to cents then needs 18 digits,
# well inside Decimal's default 28-digit context, so a quantize can never raise.
MAX_AMOUNT: Final = Decimal("1e15")

# Documented input ranges, inclusive, by API name (docs/api.md; the OpenAPI schema states them as
# minimum/maximum). They are generous (the largest published models have ~2e12 parameters and
# ~2e13 tokens) and chosen so that no product in the formulas overflows a float: at most
# 6 x 1e15 x 1e18 x 1e4 = 6e37 FLOPs, and time divides by at least 1e6 FLOP/s x 1e-3.
LIMITS: Final[Mapping[str, tuple[float, float]]] = MappingProxyType(
    {
        "model.parameters": (1.0, 1e15),
        "model.layers": (1, 100_000),
        "model.hidden_size": (1, 1_000_000),
        "model.attention_heads": (1, 100_000),
        "model.vocab_size": (1, 100_000_000),
        "model.largest_layer_parameters": (1.0, 1e15),
        "training.tokens": (1.0, 1e18),
        "training.samples": (1.0, 1e18),
        "training.tokens_per_sample": (1.0, 1e9),
        "training.epochs": (1e-6, 1e4),
        "training.sequence_length": (1, 16_777_216),
        "training.micro_batch_size": (1, 1_000_000),
        "hardware.count": (1, 1_000_000),
        "hardware.utilization": (0.001, 1.0),
        "hardware.tensor_parallel": (1, 65_536),
        "hardware.pipeline_parallel": (1, 65_536),
        "hardware.custom.memory_bytes": (1, 2**50),
        "hardware.custom.peak_flops": (1e6, 1e18),
        "hardware.custom.tdp_watts": (1.0, 100_000.0),
        "pilot.tokens_per_second": (1e-6, 1e15),
        "pilot.samples_per_second": (1e-6, 1e15),
        "pilot.gpus": (1, 1_000_000),
        "hardware.gpus_per_node": (1, 1024),
        "compute_optimal.flops": (1e15, 1e32),
        "compute_optimal.parameters": (1e6, 1e15),
        "compute_optimal.epochs": (1.0, 1e4),
        "budget.utilization": (0.001, 1.0),
        "window_hours": (0.01, 1e7),
        "serving.requests_per_month": (1.0, 1e15),
        "serving.tokens_per_request": (1.0, 1e7),
        "serving.tokens_per_second_per_gpu": (0.001, 1e9),
        "serving.months": (1, 600),
        "serving.gpus": (1, 1_000_000),
        "local.power_watts": (1.0, 1e7),
        "local.lifetime_months": (1, 600),
        "energy.pue": (1.0, 10.0),
        "energy.grid_kg_co2_per_kwh": (0.0, 10.0),
        "energy.tdp_watts": (1.0, 100_000.0),
        "reliability.checkpoint_write_seconds": (0.001, 1e6),
        "reliability.mtbf_hours": (0.001, 1e7),
        "reliability.interruptions.count": (1, 1_000_000),
        "reliability.interruptions.days": (0.001, 1e5),
        "overheads.loading_hours": (0.0, 1e6),
        "overheads.long_input_hours": (0.0, 1e6),
        "overheads.validation_fraction": (0.0, 100.0),
        "overheads.output_hours": (0.0, 1e6),
        "overheads.checkpoint_hours": (0.0, 1e6),
    }
)
_SECONDS_PER_HOUR: Final = 3600.0
# One petaflop/s-day (Brown et al. 2020, table D.1 reports GPT-3 in these units).
_PF_DAY: Final = 1e15 * 86_400
# Upper bound for "how many GPUs would fit" searches; beyond this the advice is meaningless.
_MAX_GPUS: Final = 65536
# Under this headroom the fit is called tight: allocator fragmentation and the CUDA context
# (not modelled) commonly take several percent of device memory.
_TIGHT_HEADROOM: Final = 0.10


class EstimateInputError(ValueError):
    """An input the formulas reject; ``field`` names it (dotted API form inside ``estimate``)."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


# --------------------------------------------------------------------------- validation helpers


def _positive(value: float, name: str) -> float:
    if isinstance(value, bool) or not math.isfinite(value) or value <= 0:
        raise EstimateInputError(name, f"must be a finite number > 0, got {value!r}")
    return float(value)


def _non_negative(value: float, name: str) -> float:
    if isinstance(value, bool) or not math.isfinite(value) or value < 0:
        raise EstimateInputError(name, f"must be a finite number >= 0, got {value!r}")
    return float(value)


def _positive_int(value: int, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise EstimateInputError(name, f"must be an integer >= 1, got {value!r}")
    return value


def _utilization(value: float, name: str = "utilization") -> float:
    if isinstance(value, bool) or not math.isfinite(value) or not 0 < value <= 1:
        raise EstimateInputError(name, f"must be in (0, 1], got {value!r}")
    return float(value)


def _money(value: Decimal, name: str) -> Decimal:
    if not isinstance(value, Decimal) or not value.is_finite() or value < 0:
        raise EstimateInputError(name, f"must be a finite Decimal >= 0, got {value!r}")
    return value


def _as_decimal(value: float | int | Decimal, name: str) -> Decimal:
    if isinstance(value, Decimal):
        result = value
    elif isinstance(value, bool) or not math.isfinite(value):
        raise EstimateInputError(name, f"must be a finite number, got {value!r}")
    else:
        # str() gives the shortest repr that round-trips, i.e. the number the caller meant.
        result = Decimal(str(value))
    if not result.is_finite() or result < 0:
        raise EstimateInputError(name, f"must be a finite number >= 0, got {value!r}")
    return result


class AmountOverflowError(EstimateInputError):
    """A money amount beyond ``MAX_AMOUNT``; callers rename ``field`` to the input behind it."""


def _cents(amount: Decimal, name: str = "amount") -> Decimal:
    """``amount`` quantized to cents (ROUND_HALF_UP), refused beyond ``MAX_AMOUNT``.

    Checked before quantizing: a quantize whose result needs more digits than the context's
    precision raises ``decimal.InvalidOperation`` instead of rounding.
    """
    if not amount.is_finite() or abs(amount) > MAX_AMOUNT:
        raise AmountOverflowError(
            name, f"the amount {amount:.3e} exceeds the largest amount handled, {MAX_AMOUNT:.0e}"
        )
    return amount.quantize(_CENT, rounding=ROUND_HALF_UP)


def _in_range(value: float, dotted: str) -> float:
    """``value`` within ``LIMITS[dotted]``; the error names the last part (renamed by callers)."""
    low, high = LIMITS[dotted]
    name = dotted.rsplit(".", 1)[-1]
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise EstimateInputError(name, f"must be a finite number, got {value!r}")
    if not low <= value <= high:
        raise EstimateInputError(name, f"must be between {low:g} and {high:g}, got {value:g}")
    return value


# --------------------------------------------------------------------------------------- FLOPs


def training_flops(parameters: float, tokens: float) -> float:
    """Training FLOPs ~= 6 * P * T: forward (2PT) plus backward (4PT).

    Source: Kaplan et al. (2020), "Scaling Laws for Neural Language Models", section 2.1,
    C ~= 6NBS. Ignores the attention-score term (small when d_model >> n_ctx / 12).
    """
    return 6.0 * _positive(parameters, "parameters") * _positive(tokens, "tokens")


def inference_flops(parameters: float, tokens: float = 1.0) -> float:
    """Inference (forward only) FLOPs ~= 2 * P per token.

    Source: Kaplan et al. (2020), section 2.1 (C_forward ~= 2N per token).
    """
    return 2.0 * _positive(parameters, "parameters") * _positive(tokens, "tokens")


def narayanan_flops_per_iteration(
    batch_size: int,
    sequence_length: int,
    layers: int,
    hidden_size: int,
    vocab_size: int,
    *,
    recompute: bool,
) -> float:
    """FLOPs of one training iteration of a GPT-style transformer (batch of B sequences).

    Source: Narayanan et al. (2021), "Efficient Large-Scale Language Model Training on GPU
    Clusters Using Megatron-LM", section 5.1, eq. (3): with full activation recomputation
    F = 96 B s l h^2 (1 + s/(6h) + V/(16 l h)). Without recomputation the backward-to-forward
    ratio is 2 instead of 3 for the transformer layers (the logit layer is never recomputed),
    which gives F = 72 B s l h^2 (1 + s/(6h) + V/(12 l h)).
    """
    b = float(_positive_int(batch_size, "batch_size"))
    s = float(_positive_int(sequence_length, "sequence_length"))
    n_layers = float(_positive_int(layers, "layers"))
    h = float(_positive_int(hidden_size, "hidden_size"))
    v = float(_positive_int(vocab_size, "vocab_size"))
    if recompute:
        return 96.0 * b * s * n_layers * h * h * (1.0 + s / (6.0 * h) + v / (16.0 * n_layers * h))
    return 72.0 * b * s * n_layers * h * h * (1.0 + s / (6.0 * h) + v / (12.0 * n_layers * h))


def narayanan_training_flops(
    tokens: float,
    sequence_length: int,
    layers: int,
    hidden_size: int,
    vocab_size: int,
    *,
    recompute: bool,
) -> float:
    """Whole-run FLOPs: Narayanan's per-iteration formula times tokens / (B * s) iterations.

    Source: Narayanan et al. (2021), eq. (3) and section 5.1 (end-to-end time ~= 8TP/(nX)
    with recomputation); the batch size B cancels out.
    """
    per_sequence = narayanan_flops_per_iteration(
        1, sequence_length, layers, hidden_size, vocab_size, recompute=recompute
    )
    return per_sequence * _positive(tokens, "tokens") / sequence_length


# ---------------------------------------------------------------------------------------- time


@dataclass(frozen=True)
class Overheads:
    """Stages that extrapolating from a training step forgets (docs/domain.md §7).

    Hours are wall hours on the whole allocation; ``validation_fraction`` is a fraction of the
    training wall time (0.1 = validation adds 10%).
    """

    loading_hours: float = 0.0
    long_input_hours: float = 0.0
    validation_fraction: float = 0.0
    output_hours: float = 0.0
    checkpoint_hours: float = 0.0


@dataclass(frozen=True)
class TimeEstimate:
    """Training wall hours, overhead wall hours, their sum, and GPU-hours (wall x GPUs)."""

    training_wall_hours: float
    overhead_hours: float
    wall_hours: float
    gpu_hours: float
    gpus: int


def wall_hours(flops: float, gpus: int, peak_flops: float, utilization: float) -> float:
    """Wall hours = FLOPs / (GPUs x peak FLOP/s x utilization) / 3600.

    Source: docs/domain.md §10; the standard model-FLOPs-utilization accounting of Chowdhery
    et al. (2022), "PaLM", appendix B. Assumes linear scaling over GPUs.
    """
    denominator = (
        _positive_int(gpus, "gpus")
        * _positive(peak_flops, "peak_flops")
        * _utilization(utilization)
    )
    return _non_negative(flops, "flops") / denominator / _SECONDS_PER_HOUR


def gpu_hours(flops: float, peak_flops: float, utilization: float) -> float:
    """GPU-hours = FLOPs / (peak FLOP/s x utilization) / 3600, independent of the GPU count.

    Source: as ``wall_hours`` (wall hours x GPUs under linear scaling).
    """
    return wall_hours(flops, 1, peak_flops, utilization)


def pilot_wall_hours(work: float, measured_per_second: float, pilot_gpus: int, gpus: int) -> float:
    """Wall hours for ``work`` units (tokens or samples) from a measured pilot throughput.

    The pilot's whole-job throughput, measured on ``pilot_gpus``, is scaled linearly to ``gpus``.
    Source: docs/domain.md §10 (""hours = samples x epochs / throughput"); linear
    scaling is an upper bound on the speed-up (communication grows with GPUs).
    """
    per_gpu = _positive(measured_per_second, "measured_per_second") / _positive_int(
        pilot_gpus, "pilot_gpus"
    )
    throughput = per_gpu * _positive_int(gpus, "gpus")
    return _non_negative(work, "work") / throughput / _SECONDS_PER_HOUR


def overhead_hours(training_wall_hours: float, overheads: Overheads) -> float:
    """Extra wall hours: loading + long inputs + validation + outputs + checkpoint I/O.

    Source: docs/domain.md §7 (calendar stages that step extrapolation forgets) and
    §11 (checkpoint write/transfer/restore time counts).
    """
    train = _non_negative(training_wall_hours, "training_wall_hours")
    return (
        train * _non_negative(overheads.validation_fraction, "validation_fraction")
        + _non_negative(overheads.loading_hours, "loading_hours")
        + _non_negative(overheads.long_input_hours, "long_input_hours")
        + _non_negative(overheads.output_hours, "output_hours")
        + _non_negative(overheads.checkpoint_hours, "checkpoint_hours")
    )


def _time(training_hours: float, gpus: int, overheads: Overheads) -> TimeEstimate:
    extra = overhead_hours(training_hours, overheads)
    total = training_hours + extra
    return TimeEstimate(training_hours, extra, total, total * gpus, gpus)


def time_from_flops(
    flops: float,
    gpus: int,
    peak_flops: float,
    utilization: float,
    overheads: Overheads | None = None,
) -> TimeEstimate:
    """Assumed-utilization time plus overheads; GPU-hours = wall hours x GPUs.

    Source: ``wall_hours`` and ``overhead_hours``.
    """
    hours = wall_hours(flops, gpus, peak_flops, utilization)
    return _time(hours, gpus, overheads or Overheads())


def time_from_pilot(
    work: float,
    measured_per_second: float,
    pilot_gpus: int,
    gpus: int,
    overheads: Overheads | None = None,
) -> TimeEstimate:
    """Pilot-measured time plus overheads; GPU-hours = wall hours x GPUs.

    Source: ``pilot_wall_hours`` and ``overhead_hours``.
    """
    hours = pilot_wall_hours(work, measured_per_second, pilot_gpus, gpus)
    return _time(hours, gpus, overheads or Overheads())


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


def _check_choice(value: str, choices: Sequence[str], name: str) -> str:
    if value not in choices:
        raise EstimateInputError(name, f"must be one of {', '.join(choices)}; got {value!r}")
    return value


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
    """
    _check_choice(precision, PRECISIONS, "precision")
    _check_choice(optimizer, OPTIMIZERS, "optimizer")
    mixed = precision in _MIXED
    if optimizer in ("adam", "adamw"):
        return StateBytes(2, 2, 12) if mixed else StateBytes(4, 4, 8)
    if optimizer == "sgd":
        return StateBytes(2, 2, 8) if mixed else StateBytes(4, 4, 4)
    return StateBytes(2, 2, 4) if mixed else StateBytes(4, 4, 0)


def data_parallel_degree(gpus: int, tensor_parallel: int = 1, pipeline_parallel: int = 1) -> int:
    """Data-parallel degree = GPUs / (tensor parallel x pipeline parallel), which must divide.

    Source: Narayanan et al. (2021), section 2 (n = p * t * d).
    """
    n = _positive_int(gpus, "gpus")
    model_parallel = _positive_int(tensor_parallel, "tensor_parallel") * _positive_int(
        pipeline_parallel, "pipeline_parallel"
    )
    if n % model_parallel:
        raise EstimateInputError(
            "gpus",
            f"{n} GPUs cannot be split into tensor_parallel x pipeline_parallel = "
            f"{model_parallel} evenly",
        )
    return n // model_parallel


def activation_bytes(
    sequence_length: int,
    micro_batch_size: int,
    hidden_size: int,
    attention_heads: int,
    layers: int,
    *,
    precision: str = "bf16",
    recompute: bool = False,
    flash_attention: bool = False,
    tensor_parallel: int = 1,
    sequence_parallel: bool = True,
    pipeline_parallel: int = 1,
    in_flight_microbatches: int | None = None,
) -> int:
    """Activation bytes on the busiest device (transformer layers only).

    Source: Korthikanti et al. (2022), "Reducing Activation Recomputation in Large Transformer
    Models", sections 4.1-4.2. Per layer, with 2-byte activations and 1-byte dropout masks:
    s b h (34 + 5 a s / h) bytes. Split by what is stored, that is s b h (16 v + 2) +
    a s^2 b (2 v + 1) with v bytes per value; fp32/tf32 use v = 4 (66 and 9), fp8 keeps v = 2
    (only GEMM inputs are cast).

    * Tensor parallel t with sequence parallelism (eq. 4, the default here): everything / t.
      Without it (eq. 2): s b h (10 + 24/t + 5 a s / (h t)) for v = 2.
    * ``flash_attention``: the s x s scores are not stored (Dao et al. 2022 recompute them);
      memory equals Korthikanti's selective recomputation, s b h 34 / t.
    * Full recomputation: only each layer's input is kept, 2 s b h (v s b h) per layer (/ t
      with sequence parallelism).
    * Pipeline parallel p: a stage holds ceil(L / p) layers, and under the 1F1B schedule the
      first stage keeps ``in_flight_microbatches`` = p micro-batches alive (section 4.2.3), so
      the busiest stage holds about L layers' worth. Embedding and logit activations are not
      counted (they add ~4 s b V / t bytes on the last stage).
    """
    s = _positive_int(sequence_length, "sequence_length")
    b = _positive_int(micro_batch_size, "micro_batch_size")
    h = _positive_int(hidden_size, "hidden_size")
    a = _positive_int(attention_heads, "attention_heads")
    n_layers = _positive_int(layers, "layers")
    t = _positive_int(tensor_parallel, "tensor_parallel")
    p = _positive_int(pipeline_parallel, "pipeline_parallel")
    in_flight = p if in_flight_microbatches is None else in_flight_microbatches
    _positive_int(in_flight, "in_flight_microbatches")
    _check_choice(precision, PRECISIONS, "precision")
    v = 2 if precision in _MIXED else 4
    sbh = s * b * h
    if recompute:
        per_layer = v * sbh / (t if sequence_parallel else 1)
    else:
        scores = 0.0 if flash_attention else a * s * s * b * (2 * v + 1) / t
        if sequence_parallel or t == 1:
            linear = sbh * (16 * v + 2) / t
        else:
            # Layer norms, dropout masks and the QKV / MLP inputs stay replicated (eq. 2).
            linear = sbh * (4 * v + 2) + sbh * 12 * v / t
        per_layer = linear + scores
    layers_per_stage = -(-n_layers // p)
    return math.ceil(per_layer * layers_per_stage * in_flight)


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
    shard = _positive(parameters, "parameters") / (tensor_parallel * pipeline_parallel)
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
    _positive_int(device_memory_bytes, "device_memory_bytes")
    if headroom_bytes < 0:
        raise EstimateInputError("headroom_bytes", f"must be >= 0, got {headroom_bytes!r}")
    return breakdown.total + headroom_bytes <= device_memory_bytes


OFFLOADS: Final = ("none", "optimizer", "optimizer_and_parameters")
UTILIZATION_KINDS: Final = ("hfu", "mfu")
# DeepSpeed's estimators multiply CPU memory by this "additional_buffer_factor" (their default).
DEEPSPEED_BUFFER_FACTOR: Final = 1.5
DEEPSPEED_VERSION: Final = (
    "DeepSpeed master: stage_1_and_2.estimate_zero2_model_states_mem_needs (2 + 18/N bytes per "
    "parameter on GPU) and stage3.estimate_zero3_model_states_mem_needs (zero_init=True), "
    "additional_buffer_factor=1.5"
)


@dataclass(frozen=True)
class DeepSpeedMemory:
    """What DeepSpeed's own estimator prints: bytes per GPU and per CPU (node) for model states."""

    per_gpu_bytes: int
    cpu_bytes: int
    version: str = DEEPSPEED_VERSION


def deepspeed_zero_memory(
    parameters: float,
    gpus: int,
    zero_stage: int,
    *,
    offload: str = "none",
    largest_layer_parameters: float = 0.0,
    gpus_per_node: int | None = None,
    buffer_factor: float = DEEPSPEED_BUFFER_FACTOR,
) -> DeepSpeedMemory:
    """DeepSpeed's per-GPU and per-CPU (node) model-state estimate for ZeRO stages 2 and 3.

    Source: DeepSpeed's current code, deepspeed/runtime/zero/stage_1_and_2.py
    ``estimate_zero2_model_states_mem_needs`` and stage3.py
    ``estimate_zero3_model_states_mem_needs``
    (docs/code-docs/source/memory.rst shows their output), with P parameters, N GPUs in all,
    G GPUs per node, L the largest layer's parameters and f the buffer factor (1.5):

    * ZeRO-2, no offload: GPU 2P + 18P/N (16-bit weights; 16-bit and fp32 gradients, fp32
      master and Adam states partitioned), CPU 4PGf. Optimizer offload: GPU 2P, CPU P max(4N, 16) f.
    * ZeRO-3 (zero_init): no offload GPU 4L + 18P/N, CPU 4LGf; optimizer offload GPU
      4L + 2P/N, CPU 16Pf/nodes; optimizer and parameter offload GPU 4L, CPU 18Pf/nodes.

    DeepSpeed offloads parameters only at stage 3.
    """
    p = _positive(parameters, "parameters")
    n = _positive_int(gpus, "gpus")
    per_node = min(n, 8) if gpus_per_node is None else _positive_int(gpus_per_node, "gpus_per_node")
    per_node = min(per_node, n)
    nodes = math.ceil(n / per_node)
    largest = _non_negative(largest_layer_parameters, "largest_layer_parameters")
    f = _positive(buffer_factor, "buffer_factor")
    _check_choice(offload, OFFLOADS, "offload")
    if zero_stage == 2:
        if offload == "optimizer_and_parameters":
            raise EstimateInputError(
                "offload", "DeepSpeed offloads parameters at ZeRO stage 3 only"
            )
        if offload == "optimizer":
            return DeepSpeedMemory(int(2 * p), int(p * max(4 * n, 16) * f))
        return DeepSpeedMemory(int(2 * p + int(18 * p / n)), int(p * 4 * per_node * f))
    if zero_stage == 3:
        layer = 4 * largest
        if offload == "optimizer_and_parameters":
            return DeepSpeedMemory(int(layer), int(p * 18 / nodes * f))
        if offload == "optimizer":
            return DeepSpeedMemory(int(layer + int(2 * p / n)), int(p * 16 / nodes * f))
        return DeepSpeedMemory(int(layer + int(18 * p / n)), int(largest * 4 * per_node * f))
    raise EstimateInputError("zero_stage", "DeepSpeed publishes estimators for stages 2 and 3")


def deepspeed_model_states_bytes(
    parameters: float, gpus: int, zero_stage: int, largest_layer_parameters: float = 0.0
) -> int:
    """DeepSpeed's own per-GPU model-state estimate without offload, a practical upper figure.

    Source: ``deepspeed_zero_memory`` (DeepSpeed's current estimators): ZeRO-2 = 2P + 18P/N,
    ZeRO-3 = 4 x largest layer + 18P/N. Higher than the ZeRO paper's accounting because it
    counts the fp32 gradient copy and working buffers.
    """
    return deepspeed_zero_memory(
        parameters, gpus, zero_stage, largest_layer_parameters=largest_layer_parameters
    ).per_gpu_bytes


def model_flops_per_token(
    parameters: float,
    layers: int | None = None,
    hidden_size: int | None = None,
    sequence_length: int | None = None,
) -> float:
    """Model FLOPs per trained token: 6N, plus PaLM's attention term 12 L H Q T when known.

    Source: Chowdhery et al. (2022), "PaLM", appendix B: model FLOPs per token = 6N + 12LHQT
    (L layers, H heads x Q head size = the hidden size, T sequence length). MFU is
    throughput x this / peak FLOP/s; it excludes recomputation (that is HFU).
    """
    flops = 6.0 * _positive(parameters, "parameters")
    if layers and hidden_size and sequence_length:
        flops += 12.0 * layers * hidden_size * sequence_length
    return flops


def checkpoint_size_bytes(parameters: float, precision: str, optimizer: str) -> tuple[int, int]:
    """(weights, training_state) bytes of a checkpoint.

    Weights are saved at the training precision (2 bytes mixed, 4 fp32); the training state adds
    the fp32 master copy and the optimizer moments, i.e. the ZeRO paper's weights + optimizer
    bytes per parameter (Rajbhandari et al. 2020, section 3.1: 2 + 12 for mixed Adam; gradients
    are not saved). A 7B bf16 AdamW model: 14 GB of weights, 98 GB of training state.
    """
    per = model_state_bytes_per_parameter(precision, optimizer)
    p = _positive(parameters, "parameters")
    return math.ceil(p * per.weights), math.ceil(p * (per.weights + per.optimizer))


@dataclass(frozen=True)
class Energy:
    """GPU energy, facility energy (x PUE) and emissions."""

    gpu_kwh: float
    facility_kwh: float
    kg_co2e: float


def energy_use(gpu_hours: float, tdp_watts: float, pue: float, kg_co2_per_kwh: float) -> Energy:
    """GPU kWh = GPU-hours x TDP / 1000; facility kWh = x PUE; CO2e = facility kWh x grid factor.

    Source: Touvron et al. (2023), "LLaMA", section 6.2 and table 15: MWh = GPU-h x GPU power
    x PUE (A100-80GB at 400 W, PUE 1.1), tCO2eq = MWh x 0.385. LLaMA-7B: 82,432 GPU-hours,
    36 MWh, 14 tCO2eq. Counts the GPUs at board power only (no CPUs, network or idle time).
    """
    gpu_kwh = _non_negative(gpu_hours, "gpu_hours") * _positive(tdp_watts, "tdp_watts") / 1000.0
    facility = gpu_kwh * _positive(pue, "pue")
    return Energy(gpu_kwh, facility, facility * _non_negative(kg_co2_per_kwh, "kg_co2_per_kwh"))


@dataclass(frozen=True)
class Checkpointing:
    """Optimal checkpoint intervals and the expected cost of failures, in the API's units."""

    young_interval_minutes: float
    daly_interval_minutes: float
    expected_lost_hours: float
    wall_hours_with_failures: float


def daly_wall_time(solve: float, interval: float, checkpoint_cost: float, mtbf: float) -> float:
    """Expected wall time of ``solve`` hours of work checkpointed every ``interval``.

    Source: Daly (2006), "A higher order estimate of the optimum checkpoint interval for restart
    dumps", FGCS 22(3), eq. (20): T_w = M e^(R/M) (e^((tau + delta)/M) - 1) T_s / tau, with
    Poisson failures of mean time M, checkpoint cost delta and restart time R (taken equal to
    delta: reading a checkpoint back takes about as long as writing it). All in one unit.
    """
    m = _positive(mtbf, "mtbf")
    tau = _positive(interval, "interval")
    delta = _positive(checkpoint_cost, "checkpoint_cost")
    exponent = (tau + 2.0 * delta) / m
    # Beyond e^50 the job practically never finishes (and e^700 would overflow a float).
    if exponent > 50:
        raise EstimateInputError(
            "checkpoint_cost",
            "a checkpoint takes so much longer than the mean time between failures that the job "
            "would never finish",
        )
    return (
        m
        * math.exp(delta / m)
        * math.expm1((tau + delta) / m)
        * _non_negative(solve, "solve")
        / tau
    )


def checkpointing(
    training_hours: float, checkpoint_write_seconds: float, mtbf_hours: float
) -> Checkpointing:
    """Young's and Daly's intervals, and wall time with failures at Daly's interval.

    Source: ``young_interval`` (Young 1974), ``daly_interval`` and ``daly_wall_time`` (Daly
    2006). ``expected_lost_hours`` is that wall time minus the failure-free training hours:
    checkpoint writes, rework after each failure and restarts.
    """
    c = _positive(checkpoint_write_seconds, "checkpoint_write_seconds") / _SECONDS_PER_HOUR
    m = _positive(mtbf_hours, "mtbf_hours")
    young = young_interval(c, m)
    daly = daly_interval(c, m)
    wall = daly_wall_time(training_hours, daly, c, m)
    return Checkpointing(young * 60.0, daly * 60.0, wall - training_hours, wall)


# ---------------------------------------------------------------------------------------- cost


@dataclass(frozen=True)
class Money:
    """An exact amount with its currency."""

    amount: Decimal
    currency: str


def hourly_cost(
    gpus: int,
    hours: float | Decimal,
    rate_per_gpu_hour: Decimal,
    extra: Decimal = Decimal("0"),
) -> Decimal:
    """Cost = GPUs x hours x hourly rate + extra, quantized to cents (ROUND_HALF_UP).

    Source: docs/domain.md §9 ("GPUs x time x hourly rate + additional
    infrastructure costs"). ``extra`` is what the user states (storage, network); no tax or
    transfer cost is invented.
    """
    if isinstance(gpus, bool) or not isinstance(gpus, int) or gpus < 0:
        raise EstimateInputError("gpus", f"must be an integer >= 0, got {gpus!r}")
    exact = gpus * _as_decimal(hours, "hours") * _money(rate_per_gpu_hour, "rate_per_gpu_hour")
    return _cents(exact + _money(extra, "extra"), "hours")


def lot_cost(lots: int, price_per_lot: Decimal) -> Decimal:
    """Cost of ``lots`` rental lots = lots x price per lot, quantized to cents.

    Source: docs/domain.md §9 (two 3-day RTX 4090 lots = 94.28 USD). A lot's price already
    covers all its GPUs: it is never multiplied by the GPUs per lot.
    """
    if isinstance(lots, bool) or not isinstance(lots, int) or lots < 0:
        raise EstimateInputError("lots", f"must be an integer >= 0, got {lots!r}")
    return _cents(lots * _money(price_per_lot, "price_per_lot"), "lots")


# --------------------------------------------------------------------------------- checkpoints


def young_interval(checkpoint_cost: float, mtbf: float) -> float:
    """Optimal checkpoint interval sqrt(2 C M), in the unit of the inputs.

    Source: Young (1974), "A first order approximation to the optimum checkpoint interval",
    CACM 17(9). C = time to write one checkpoint, M = mean time between failures.
    """
    return math.sqrt(2.0 * _positive(checkpoint_cost, "checkpoint_cost") * _positive(mtbf, "mtbf"))


def daly_interval(checkpoint_cost: float, mtbf: float) -> float:
    """Daly's higher-order optimum checkpoint interval, in the unit of the inputs.

    Source: Daly (2006), "A higher order estimate of the optimum checkpoint interval for
    restart dumps", FGCS 22(3), eq. (37): for C < 2M,
    tau = sqrt(2 C M) [1 + (1/3) sqrt(C / (2M)) + (1/9) (C / (2M))] - C; otherwise tau = M.
    """
    c = _positive(checkpoint_cost, "checkpoint_cost")
    m = _positive(mtbf, "mtbf")
    if c >= 2.0 * m:
        return m
    x = c / (2.0 * m)
    return math.sqrt(2.0 * c * m) * (1.0 + math.sqrt(x) / 3.0 + x / 9.0) - c


# ------------------------------------------------------------------------------- scaling laws


@dataclass(frozen=True)
class ComputeOptimal:
    """A compute-optimal split: parameters and training tokens."""

    parameters: float
    tokens: float


def chinchilla_optimal(
    compute_flops: float, tokens_per_parameter: float = CHINCHILLA_TOKENS_PER_PARAMETER
) -> ComputeOptimal:
    """N_opt = sqrt(C / (6 k)), D_opt = k N_opt, from C = 6 N D and D ~= k N (k = 20).

    Source: Hoffmann et al. (2022), "Training Compute-Optimal Large Language Models"
    (Chinchilla): parameters and tokens scale equally with compute, about 20 tokens per
    parameter (Chinchilla: 70B parameters, 1.4T tokens).
    """
    c = _positive(compute_flops, "compute_flops")
    k = _positive(tokens_per_parameter, "tokens_per_parameter")
    n = math.sqrt(c / (6.0 * k))
    return ComputeOptimal(n, k * n)


# Least-squares fit of N_opt = G C^a to Hoffmann et al. (2022), table 3 (log space, every row
# but the 67B one, whose printed 1.5T tokens disagree with its 5.76e23 FLOPs under C = 6ND:
# 5.76e23 / (6 x 67e9) = 1.43T). The paper's approach 1 gives a = 0.50.
CHINCHILLA_FIT_COEFFICIENT: Final = 0.0993487
CHINCHILLA_FIT_EXPONENT: Final = 0.498092


def chinchilla_fit(
    *, flops: float | None = None, parameters: float | None = None
) -> ComputeOptimal:
    """Compute-optimal parameters and tokens from FLOPs, or FLOPs and tokens from parameters.

    Source: Hoffmann et al. (2022), "Training Compute-Optimal Large Language Models", table 3
    (approach 1): N_opt = G C^a with G = 0.0993487 and a = 0.498092 fitted to the table, and
    D_opt = C / (6 N_opt). Reproduces every row within 1% except the 67B row's tokens (see
    CHINCHILLA_FIT_COEFFICIENT); the tokens per parameter drift from 20.0 (400M) to 21.6 (10T)
    as in the table, where ``chinchilla_optimal`` keeps a fixed 20.
    """
    if (flops is None) == (parameters is None):
        raise EstimateInputError("flops", "give exactly one of flops or parameters")
    if flops is not None:
        c = _positive(flops, "flops")
        n = CHINCHILLA_FIT_COEFFICIENT * c**CHINCHILLA_FIT_EXPONENT
    else:
        n = _positive(parameters or 0.0, "parameters")
        c = (n / CHINCHILLA_FIT_COEFFICIENT) ** (1.0 / CHINCHILLA_FIT_EXPONENT)
    return ComputeOptimal(n, c / (6.0 * n))


def kaplan_loss_ratio(factor: float, alpha: float) -> float:
    """Loss ratio after scaling parameters or data by ``factor``: factor ** -alpha.

    Source: Kaplan et al. (2020), eqs. (1.1)-(1.2): L(N) ~ N^-0.076, L(D) ~ D^-0.095 (use
    KAPLAN_ALPHA_PARAMETERS / KAPLAN_ALPHA_DATA). Halving the model: 0.5 ** -0.076 ~= 1.054,
    i.e. about 5.4% higher loss, when the other factor is not the bottleneck.
    """
    ratio: float = math.pow(_positive(factor, "factor"), -_positive(alpha, "alpha"))
    return ratio


@dataclass(frozen=True)
class ScalingLever:
    """One Kaplan lever on a training run: its FLOPs and cost relative to the run, and the
    projected loss ratio (None where Kaplan's law says nothing)."""

    name: str
    description: str
    flops: float
    cost_ratio: float
    loss_ratio: float | None
    projection: str


def scaling_levers(
    parameters: float,
    tokens: float,
    *,
    epochs: float = 1.0,
    precision_speedup: float | None = None,
    lower_precision: str | None = None,
) -> tuple[ScalingLever, ...]:
    """What halving the model, the data, the epochs or the precision does to cost and loss.

    Source: Kaplan et al. (2020), eqs. (1.1)-(1.2), as docs/domain.md §10 quotes them: loss ~
    N^-0.076 and D^-0.095, each when the other is not the bottleneck; cost follows FLOPs (6 N D)
    at a fixed utilization and hourly rate. A lower precision changes no FLOP count: its cost ratio
    assumes throughput follows peak FLOP/s, and Kaplan projects no loss for it. These are
    projections from a power law fitted on other models, not measurements.
    """
    n = _positive(parameters, "parameters")
    d = _positive(tokens, "tokens")
    e = _positive(epochs, "epochs")
    flops = 6.0 * n * d
    model_loss = kaplan_loss_ratio(0.5, KAPLAN_ALPHA_PARAMETERS)
    data_loss = kaplan_loss_ratio(0.5, KAPLAN_ALPHA_DATA)

    def percent(ratio: float) -> str:
        return f"{100 * (ratio - 1):.1f}%"

    levers = [
        ScalingLever(
            "half_model",
            f"half the model ({_count(n / 2)} parameters) on the same tokens",
            flops / 2,
            0.5,
            model_loss,
            f"Kaplan's L ~ N^-0.076 projects a loss about {percent(model_loss)} higher.",
        ),
        ScalingLever(
            "half_data",
            f"half the data ({_count(d / 2)} tokens) for the same model",
            flops / 2,
            0.5,
            data_loss,
            f"Kaplan's L ~ D^-0.095 projects a loss about {percent(data_loss)} higher.",
        ),
    ]
    if e >= 2:
        levers.append(
            ScalingLever(
                "half_epochs",
                f"{e / 2:g} epochs instead of {e:g} (the same unique data, seen half as often)",
                flops / 2,
                0.5,
                None,
                "Kaplan's law counts distinct tokens: no loss projection for fewer repeats; "
                "let the validation metric judge.",
            )
        )
    if precision_speedup is not None and lower_precision is not None:
        speedup = _positive(precision_speedup, "precision_speedup")
        levers.append(
            ScalingLever(
                "lower_precision",
                f"{lower_precision} (assuming throughput follows peak FLOP/s, x{speedup:.2g})",
                flops,
                1.0 / speedup,
                None,
                "Kaplan's law projects nothing for precision; check the loss curve on a pilot.",
            )
        )
    return tuple(levers)


def scaled_amount(amount: Decimal, ratio: float) -> Decimal:
    """``amount`` x ``ratio``, to cents (ROUND_HALF_UP); the ratio through its shortest repr."""
    return _cents(_money(amount, "amount") * _as_decimal(ratio, "ratio"), "amount")


# ------------------------------------------------------------------------------------ serving


@dataclass(frozen=True)
class InferenceProjection:
    """Monthly serving GPU-hours and cost, cumulative costs, and when they pass training."""

    monthly_gpu_hours: float
    monthly_cost: Decimal
    cumulative_costs: tuple[Decimal, ...]
    month_exceeding_training: int | None


def inference_projection(
    parameters: float,
    tokens_per_month: float,
    peak_flops: float,
    utilization: float,
    rate_per_gpu_hour: Decimal,
    months: int,
    training_cost: Decimal = Decimal("0"),
) -> InferenceProjection:
    """Serving cost over months: tokens x 2P FLOPs / (peak x utilization) -> GPU-hours x rate.

    Source: Kaplan et al. (2020) for 2P FLOPs per generated or scored token; docs/domain.md
    §10 ("train once, serve many"). Each month is billed (and rounded to cents) on its
    own; ``month_exceeding_training`` is the first month (1-based, not capped by ``months``)
    whose cumulative cost is strictly above ``training_cost``, None if serving costs nothing.
    """
    flops = inference_flops(parameters, tokens_per_month)
    hours = gpu_hours(flops, peak_flops, utilization)
    monthly = hourly_cost(1, hours, rate_per_gpu_hour)
    n_months = _positive_int(months, "months")
    cumulative = tuple(monthly * m for m in range(1, n_months + 1))
    training = _money(training_cost, "training_cost")
    exceeding = None if monthly == 0 else int(training // monthly) + 1
    return InferenceProjection(hours, monthly, cumulative, exceeding)


HOURS_PER_MONTH: Final = 730.0  # 8,760 h a year / 12


@dataclass(frozen=True)
class LocalServing:
    """Owning the serving hardware: monthly power cost, cumulative cost, break-even month."""

    monthly_cost: Decimal
    cumulative: tuple[Decimal, ...]
    break_even_month: int | None
    within_lifetime: bool


@dataclass(frozen=True)
class ServingProjection:
    tokens_per_month: float
    gpu_hours_per_month: float
    billed_hours_per_month: float
    load: float
    monthly_cost: Decimal
    cumulative: tuple[Decimal, ...]
    month_exceeding_training: int | None
    local: LocalServing | None


def serving_projection(
    *,
    requests_per_month: float,
    tokens_per_request: float,
    tokens_per_second_per_gpu: float,
    months: int,
    hourly_rate_per_gpu: Decimal,
    billing: str = "busy",
    gpus: int = 1,
    training_cost: Decimal | None = None,
    purchase_price: Decimal | None = None,
    power_watts: float | None = None,
    electricity_per_kwh: Decimal | None = None,
    lifetime_months: int | None = None,
) -> ServingProjection:
    """Monthly and cumulative serving cost, when it passes training, and local vs cloud.

    Source: docs/domain.md §10 ("train once, serve many": serving repeats every
    month while training is paid once; owned hardware amortizes under a steady load). Busy
    GPU-hours = requests x tokens per request / measured tokens/s per GPU / 3600. ``busy``
    billing pays those hours; ``always_on`` pays ``gpus`` x 730 h a month whatever the load.
    Each month is billed to cents (ROUND_HALF_UP); cumulative costs are their sums.
    ``month_exceeding_training`` is the first month (1-based, not capped by ``months``) whose
    cumulative cost is strictly above the training cost. Owning costs the purchase price up
    front plus electricity for the same hours at ``power_watts``; ``break_even_month`` is the
    first month from which the cumulative cloud cost is at least the cumulative local cost
    (None if it never is), within its lifetime or not (``within_lifetime`` says).
    """
    tokens = _positive(requests_per_month, "requests_per_month") * _positive(
        tokens_per_request, "tokens_per_request"
    )
    busy = tokens / _positive(tokens_per_second_per_gpu, "tokens_per_second_per_gpu") / 3600.0
    n_months = _positive_int(months, "months")
    rate = _money(hourly_rate_per_gpu, "hourly_rate_per_gpu")
    _check_choice(billing, ("busy", "always_on"), "billing")
    if billing == "always_on":
        billed = _positive_int(gpus, "gpus") * HOURS_PER_MONTH
        load = busy / billed
    else:
        billed, load = busy, 1.0
    try:
        monthly = _cents(_as_decimal(billed, "hours") * rate, "hourly_rate_per_gpu")
        cumulative = tuple(_cents(monthly * m, "months") for m in range(1, n_months + 1))
    except AmountOverflowError as error:
        raise AmountOverflowError("hourly_rate_per_gpu", error.message) from None
    exceeding = None
    if training_cost is not None and monthly > 0:
        exceeding = (
            math.floor(Fraction(_money(training_cost, "training_cost")) / Fraction(monthly)) + 1
        )
    local = None
    if purchase_price is not None:
        if power_watts is None or electricity_per_kwh is None or lifetime_months is None:
            raise EstimateInputError(
                "local", "give purchase_price, power_watts, electricity_per_kwh, lifetime_months"
            )
        price = _money(purchase_price, "purchase_price")
        kwh = _as_decimal(billed * _positive(power_watts, "power_watts") / 1000.0, "power_watts")
        power = _cents(kwh * _money(electricity_per_kwh, "electricity_per_kwh"), "power_watts")
        life = _positive_int(lifetime_months, "lifetime_months")
        local_cumulative = tuple(
            _cents(price + power * m, "purchase_price") for m in range(1, n_months + 1)
        )
        saving = monthly - power
        if price == 0:
            even: int | None = 1
        elif saving <= 0:
            even = None
        else:
            even = max(1, math.ceil(Fraction(price) / Fraction(saving)))
        local = LocalServing(power, local_cumulative, even, even is not None and even <= life)
    return ServingProjection(tokens, busy, billed, load, monthly, cumulative, exceeding, local)


def break_even_months(
    hardware_price: Decimal,
    cloud_rate_per_hour: Decimal,
    hours_per_month: float,
    power_cost_per_hour: Decimal = Decimal("0"),
) -> int | None:
    """Whole months until owning costs less than renting; None if it never does.

    Owning costs the price up front plus power for each used hour; renting costs the cloud
    rate for the same hours. Months = ceil(price / (hours x (cloud rate - power))).
    Source: docs/domain.md §10 (owned hardware amortizes under steady load; the
    comparison is at the real load, in hours per month). Resale value and staff are ignored.
    """
    price = _money(hardware_price, "hardware_price")
    saving_per_hour = _money(cloud_rate_per_hour, "cloud_rate_per_hour") - _money(
        power_cost_per_hour, "power_cost_per_hour"
    )
    monthly_saving = _as_decimal(hours_per_month, "hours_per_month") * saving_per_hour
    if price == 0:
        return 0
    if monthly_saving <= 0:
        return None
    # Exact rational division: Decimal's divmod raises once the quotient needs > 28 digits.
    return math.ceil(Fraction(price) / Fraction(monthly_saving))


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


@dataclass(frozen=True)
class Lever:
    """One cost lever (docs/domain.md §10) recomputed: what it would cost instead."""

    name: str
    description: str
    training_flops: float
    wall_hours: float
    gpu_hours: float
    cost: Money | None
    loss_ratio: float | None


@dataclass(frozen=True)
class EstimateResult:
    """The answer of POST /api/v1/estimates/preview/ (plus detail the view may expose).

    ``training_flops`` is 6PT (model FLOPs); ``executed_flops`` adds the recomputed forward
    pass when activation checkpointing is on (x 4/3) and is what assumed-utilization time uses;
    ``narayanan_flops`` is the architecture-aware cross-check when the architecture is given.
    """

    training_flops: float
    executed_flops: float
    narayanan_flops: float | None
    tokens: float
    gpu_hours: float
    wall_hours: float
    training_wall_hours: float
    overhead_hours: float
    memory: MemoryBreakdown
    device_memory_bytes: int
    fits_in_memory: bool
    activations_counted: bool
    cost: Money | None
    time_source: Literal["pilot", "assumed"]
    pilot_utilization: float | None
    data_parallel: int
    levers: tuple[Lever, ...]
    recommendations: list[str] = field(hash=False)
    model_flops: float = 0.0
    pf_days: float = 0.0
    mfu: float = 0.0
    hfu: float = 0.0
    deepspeed: DeepSpeedMemory | None = None
    cpu_memory_bytes: int | None = None
    energy: Energy | None = None
    checkpointing: Checkpointing | None = None
    checkpoint_weights_bytes: int = 0
    checkpoint_training_state_bytes: int = 0


@dataclass(frozen=True)
class _Core:
    training_flops: float
    executed_flops: float
    model_flops: float
    tokens: float
    time: TimeEstimate
    source: Literal["pilot", "assumed"]
    cost: Money | None


def _resolve_gpu(gpu: GpuModel | str) -> GpuModel:
    if isinstance(gpu, GpuModel):
        return gpu
    try:
        return get_gpu(gpu)
    except (KeyError, AttributeError):
        raise EstimateInputError("hardware.gpu", f"unknown GPU model {gpu!r}") from None


def _rename(error: EstimateInputError, prefix: str) -> EstimateInputError:
    return EstimateInputError(f"{prefix}.{error.field}", error.message)


def _validate(inp: EstimateInput) -> GpuModel:  # noqa: C901
    """Check every field with docs/api.md's dotted names; return the resolved GPU."""
    model, training, hardware = inp.model, inp.training, inp.hardware
    try:
        _in_range(_positive(model.parameters, "parameters"), "model.parameters")
        for name in ("layers", "hidden_size", "attention_heads", "vocab_size"):
            value = getattr(model, name)
            if value is not None:
                _in_range(_positive_int(value, name), f"model.{name}")
        if model.largest_layer_parameters is not None:
            _in_range(model.largest_layer_parameters, "model.largest_layer_parameters")
    except EstimateInputError as error:
        raise _rename(error, "model") from None

    try:
        if training.tokens is not None:
            if training.samples is not None or training.tokens_per_sample is not None:
                raise EstimateInputError("tokens", "give tokens or samples + tokens_per_sample")
            _in_range(_positive(training.tokens, "tokens"), "training.tokens")
        elif training.samples is None:
            raise EstimateInputError("tokens", "give tokens or samples + tokens_per_sample")
        else:
            _in_range(_positive(training.samples, "samples"), "training.samples")
            if training.tokens_per_sample is None:
                raise EstimateInputError("tokens_per_sample", "required with samples")
            _in_range(
                _positive(training.tokens_per_sample, "tokens_per_sample"),
                "training.tokens_per_sample",
            )
        _in_range(_positive(training.epochs, "epochs"), "training.epochs")
        for name in ("sequence_length", "micro_batch_size"):
            _in_range(_positive_int(getattr(training, name), name), f"training.{name}")
        _check_choice(training.precision, PRECISIONS, "precision")
        _check_choice(training.optimizer, OPTIMIZERS, "optimizer")
    except EstimateInputError as error:
        raise _rename(error, "training") from None

    gpu = _resolve_gpu(hardware.gpu)
    try:
        _in_range(_positive_int(hardware.count, "count"), "hardware.count")
        _in_range(_utilization(hardware.utilization), "hardware.utilization")
        if isinstance(hardware.zero_stage, bool) or hardware.zero_stage not in (0, 1, 2, 3):
            raise EstimateInputError(
                "zero_stage", f"must be 0, 1, 2 or 3; got {hardware.zero_stage!r}"
            )
        for name in ("tensor_parallel", "pipeline_parallel"):
            _in_range(_positive_int(getattr(hardware, name), name), f"hardware.{name}")
        if hardware.gpus_per_node is not None:
            _in_range(
                _positive_int(hardware.gpus_per_node, "gpus_per_node"), "hardware.gpus_per_node"
            )
        _check_choice(hardware.utilization_kind, UTILIZATION_KINDS, "utilization_kind")
        _check_choice(hardware.offload, OFFLOADS, "offload")
        if hardware.offload == "optimizer" and hardware.zero_stage < 1:
            raise EstimateInputError(
                "offload", "offloading the optimizer needs ZeRO stage 1 or more (ZeRO-Offload)"
            )
        if hardware.offload == "optimizer_and_parameters" and hardware.zero_stage != 3:
            raise EstimateInputError("offload", "offloading parameters needs ZeRO stage 3")
        try:
            data_parallel_degree(
                hardware.count, hardware.tensor_parallel, hardware.pipeline_parallel
            )
        except EstimateInputError as error:
            raise EstimateInputError("count", error.message) from None
        if model.layers is not None and hardware.pipeline_parallel > model.layers:
            raise EstimateInputError(
                "pipeline_parallel", f"more pipeline stages than the model's {model.layers} layers"
            )
        heads = model.attention_heads
        if heads is not None and heads % hardware.tensor_parallel:
            raise EstimateInputError(
                "tensor_parallel", f"must divide the model's {heads} attention heads"
            )
    except EstimateInputError as error:
        raise _rename(error, "hardware") from None
    if not gpu.supports(training.precision):
        raise EstimateInputError(
            "training.precision",
            f"the {gpu.name} has no {training.precision} support; "
            f"it offers {', '.join(gpu.peak_flops)}",
        )

    if inp.pilot is not None:
        pilot = inp.pilot
        try:
            given = [
                v for v in (pilot.tokens_per_second, pilot.samples_per_second) if v is not None
            ]
            if len(given) != 1:
                raise EstimateInputError(
                    "tokens_per_second", "give exactly one of tokens_per_second, samples_per_second"
                )
            if pilot.tokens_per_second is not None:
                _in_range(
                    _positive(pilot.tokens_per_second, "tokens_per_second"),
                    "pilot.tokens_per_second",
                )
            if pilot.samples_per_second is not None:
                _in_range(
                    _positive(pilot.samples_per_second, "samples_per_second"),
                    "pilot.samples_per_second",
                )
            if pilot.gpus is not None:
                _in_range(_positive_int(pilot.gpus, "gpus"), "pilot.gpus")
        except EstimateInputError as error:
            raise _rename(error, "pilot") from None

    if inp.overheads is not None:
        try:
            overhead_hours(0.0, inp.overheads)
            for name in (
                "loading_hours",
                "long_input_hours",
                "validation_fraction",
                "output_hours",
                "checkpoint_hours",
            ):
                _in_range(getattr(inp.overheads, name), f"overheads.{name}")
        except EstimateInputError as error:
            raise _rename(error, "overheads") from None

    if inp.energy is not None:
        try:
            _in_range(inp.energy.pue, "energy.pue")
            _in_range(inp.energy.grid_kg_co2_per_kwh, "energy.grid_kg_co2_per_kwh")
            if inp.energy.tdp_watts is not None:
                _in_range(inp.energy.tdp_watts, "energy.tdp_watts")
        except EstimateInputError as error:
            raise _rename(error, "energy") from None

    if inp.cost is not None:
        cost = inp.cost
        try:
            _money(cost.hourly_rate_per_gpu, "hourly_rate_per_gpu")
            _money(cost.extra, "extra")
            if not (
                isinstance(cost.currency, str)
                and len(cost.currency) == 3
                and cost.currency.isalpha()
            ):
                raise EstimateInputError(
                    "currency", f"must be a 3-letter code, got {cost.currency!r}"
                )
        except EstimateInputError as error:
            raise _rename(error, "cost") from None
    return gpu


def _tokens_per_epoch(training: TrainingSpec) -> float:
    if training.tokens is not None:
        return training.tokens
    assert training.samples is not None and training.tokens_per_sample is not None
    return training.samples * training.tokens_per_sample


def _samples_per_epoch(training: TrainingSpec) -> float:
    if training.samples is not None:
        return training.samples
    # Token counts without a sample count: assume packed sequences of sequence_length tokens.
    return _tokens_per_epoch(training) / training.sequence_length


def _core(inp: EstimateInput, gpu: GpuModel) -> _Core:
    training, hardware = inp.training, inp.hardware
    tokens = _tokens_per_epoch(training) * training.epochs
    flops = training_flops(inp.model.parameters, tokens)
    model = inp.model
    # PaLM appendix B: the attention term counts when the architecture is known.
    model_flops = tokens * model_flops_per_token(
        model.parameters, model.layers, model.hidden_size, training.sequence_length
    )
    executed = model_flops * _recompute_factor(training)
    overheads = inp.overheads or Overheads()
    source: Literal["pilot", "assumed"]
    if inp.pilot is not None:
        pilot = inp.pilot
        pilot_gpus = pilot.gpus or hardware.count
        if pilot.tokens_per_second is not None:
            work, rate = tokens, pilot.tokens_per_second
        else:
            assert pilot.samples_per_second is not None
            work, rate = _samples_per_epoch(training) * training.epochs, pilot.samples_per_second
        time = time_from_pilot(work, rate, pilot_gpus, hardware.count, overheads)
        source = "pilot"
    else:
        peak = gpu.peak_flops[training.precision]
        # MFU divides model FLOPs, HFU the FLOPs executed (with recomputation): same time.
        work = model_flops if hardware.utilization_kind == "mfu" else executed
        time = time_from_flops(work, hardware.count, peak, hardware.utilization, overheads)
        source = "assumed"
    money = None
    if inp.cost is not None:
        try:
            amount = hourly_cost(
                hardware.count, time.wall_hours, inp.cost.hourly_rate_per_gpu, inp.cost.extra
            )
        except AmountOverflowError as error:
            # The rate is the input that turns (in-range) hours into money; name it, with the
            # hours it was applied to, rather than an internal "hours".
            raise AmountOverflowError(
                "cost.hourly_rate_per_gpu",
                f"{time.gpu_hours:.3g} GPU-hours at this rate cost more than the largest amount "
                f"handled ({MAX_AMOUNT:.0e} {inp.cost.currency}): {error.message}",
            ) from None
        money = Money(amount, inp.cost.currency)
    return _Core(flops, executed, model_flops, tokens, time, source, money)


def _recompute_factor(training: TrainingSpec) -> float:
    return RECOMPUTE_FLOPS_FACTOR if training.activation_checkpointing else 1.0


@dataclass(frozen=True)
class _MemConfig:
    gpus: int
    zero_stage: int
    precision: str
    recompute: bool
    flash: bool
    micro_batch: int
    offload: str = "none"


def _memory(inp: EstimateInput, cfg: _MemConfig) -> MemoryBreakdown:
    model, hardware = inp.model, inp.hardware
    tp, pp = hardware.tensor_parallel, hardware.pipeline_parallel
    acts = 0
    if model.layers and model.hidden_size and model.attention_heads:
        # Megatron enables sequence parallelism with tensor parallelism; assumed here.
        acts = activation_bytes(
            inp.training.sequence_length,
            cfg.micro_batch,
            model.hidden_size,
            model.attention_heads,
            model.layers,
            precision=cfg.precision,
            recompute=cfg.recompute,
            flash_attention=cfg.flash,
            tensor_parallel=tp,
            pipeline_parallel=pp,
        )
    on_device = memory_per_device(
        model.parameters,
        precision=cfg.precision,
        optimizer=inp.training.optimizer,
        gpus=cfg.gpus,
        zero_stage=cfg.zero_stage,
        tensor_parallel=tp,
        pipeline_parallel=pp,
        activations=acts,
    )
    if cfg.offload == "none":
        return on_device
    # ZeRO-Offload (Ren et al. 2021): the fp32 master copy and optimizer states live on the CPU.
    # ZeRO-Infinity's parameter offload (stage 3) keeps only the layer being computed (its
    # 16-bit weights and gradients) on the device.
    if cfg.offload == "optimizer":
        weights, gradients = on_device.weights, on_device.gradients
    else:
        per = model_state_bytes_per_parameter(cfg.precision, inp.training.optimizer)
        layer = _largest_layer(model) / tp
        weights, gradients = math.ceil(layer * per.weights), math.ceil(layer * per.gradients)
    total = weights + gradients + acts
    return MemoryBreakdown(weights, gradients, 0, acts, total)


def _largest_layer(model: ModelSpec) -> float:
    if model.largest_layer_parameters is not None:
        return model.largest_layer_parameters
    if model.vocab_size and model.hidden_size:
        return float(model.vocab_size * model.hidden_size)
    return 0.0


def _gib(n_bytes: int) -> str:
    return f"{n_bytes / GIB:,.1f} GiB"


def _and(items: Sequence[str]) -> str:
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


def _count(value: float) -> str:
    for scale, suffix in ((1e12, "T"), (1e9, "B"), (1e6, "M"), (1e3, "K")):
        if value >= scale:
            return f"{value / scale:.3g}{suffix}"
    return f"{value:.3g}"


def _money_text(money: Money) -> str:
    return f"{money.amount:,.2f} {money.currency}"


def lower_precision(gpu: GpuModel, precision: str) -> str | None:
    """The next lower precision the card has a peak for (fp32/tf32 -> bf16/fp16 -> fp8)."""
    candidates = {"fp32": ("bf16", "fp16"), "tf32": ("bf16", "fp16"), "bf16": ("fp8",)}
    candidates["fp16"] = ("fp8",)
    for option in candidates.get(precision, ()):
        if gpu.supports(option):
            return option
    return None


def _scaled_pilot(pilot: PilotSpec | None, speedup: float) -> PilotSpec | None:
    # A lever that divides FLOPs per token by k is assumed to multiply pilot throughput by k.
    if pilot is None:
        return None
    return replace(
        pilot,
        tokens_per_second=None
        if pilot.tokens_per_second is None
        else pilot.tokens_per_second * speedup,
        samples_per_second=None
        if pilot.samples_per_second is None
        else pilot.samples_per_second * speedup,
    )


def _levers(inp: EstimateInput, gpu: GpuModel) -> tuple[Lever, ...]:
    model, training = inp.model, inp.training
    options: list[tuple[str, str, EstimateInput, float | None]] = []
    half_model = replace(model, parameters=model.parameters / 2)
    options.append(
        (
            "half_model",
            f"half the model ({_count(half_model.parameters)} parameters)",
            replace(inp, model=half_model, pilot=_scaled_pilot(inp.pilot, 2.0)),
            kaplan_loss_ratio(0.5, KAPLAN_ALPHA_PARAMETERS),
        )
    )
    half_data = replace(
        training,
        tokens=None if training.tokens is None else training.tokens / 2,
        samples=None if training.samples is None else training.samples / 2,
    )
    options.append(
        (
            "half_data",
            f"half the data ({_count(_tokens_per_epoch(half_data) * training.epochs)} tokens)",
            replace(inp, training=half_data),
            kaplan_loss_ratio(0.5, KAPLAN_ALPHA_DATA),
        )
    )
    lower = lower_precision(gpu, training.precision)
    if lower is not None:
        speedup = gpu.peak_flops[lower] / gpu.peak_flops[training.precision]
        options.append(
            (
                "lower_precision",
                f"{lower} instead of {training.precision} (assuming throughput follows peak "
                f"FLOP/s, x{speedup:.2g})",
                replace(
                    inp,
                    training=replace(training, precision=lower),
                    pilot=_scaled_pilot(inp.pilot, speedup),
                ),
                None,
            )
        )
    if training.epochs >= 2:
        options.append(
            (
                "fewer_epochs",
                f"{training.epochs - 1:g} epochs instead of {training.epochs:g}",
                replace(inp, training=replace(training, epochs=training.epochs - 1)),
                None,
            )
        )
    levers = []
    for name, description, changed, loss_ratio in options:
        core = _core(changed, gpu)
        levers.append(
            Lever(
                name,
                description,
                core.training_flops,
                core.time.wall_hours,
                core.time.gpu_hours,
                core.cost,
                loss_ratio,
            )
        )
    return tuple(levers)


def _min_gpus_that_fit(
    inp: EstimateInput, cfg: _MemConfig, device: int
) -> tuple[int, MemoryBreakdown] | None:
    """Smallest GPU count (a multiple of tp x pp) at which ``cfg`` fits, by bisection."""
    model_parallel = inp.hardware.tensor_parallel * inp.hardware.pipeline_parallel
    low = cfg.gpus // model_parallel
    high = _MAX_GPUS // model_parallel

    def at(dp: int) -> MemoryBreakdown:
        return _memory(inp, replace(cfg, gpus=dp * model_parallel))

    if high < low or not fits_in_memory(at(high), device):
        return None
    # Memory per device never grows with the data-parallel degree, so bisection is valid.
    while low < high:
        middle = (low + high) // 2
        if fits_in_memory(at(middle), device):
            high = middle
        else:
            low = middle + 1
    return low * model_parallel, at(low)


_Change = Callable[[_MemConfig], _MemConfig]


def _with_flash(cfg: _MemConfig) -> _MemConfig:
    return replace(cfg, flash=True)


def _with_micro_batch_1(cfg: _MemConfig) -> _MemConfig:
    return replace(cfg, micro_batch=1)


def _with_recompute(cfg: _MemConfig) -> _MemConfig:
    return replace(cfg, recompute=True)


def _fit_advice(inp: EstimateInput, gpu: GpuModel, memory: MemoryBreakdown) -> list[str]:  # noqa: C901
    """Plain-word ways to fit, each with its computed bytes per device."""
    training, hardware = inp.training, inp.hardware
    device = gpu.memory_bytes
    base = _MemConfig(
        hardware.count,
        hardware.zero_stage,
        training.precision,
        training.activation_checkpointing,
        training.flash_attention,
        training.micro_batch_size,
        hardware.offload,
    )

    def verdict(m: MemoryBreakdown) -> str:
        return "fits" if fits_in_memory(m, device) else "still too much"

    advice = [
        f"Does not fit: {_gib(memory.total)} per device (weights {_gib(memory.weights)}, "
        f"gradients {_gib(memory.gradients)}, optimizer {_gib(memory.optimizer)}, activations "
        f"{_gib(memory.activations)}) but the {gpu.name} has {_gib(device)}."
    ]

    # Each activation lever: its label and how it changes the configuration.
    has_acts = memory.activations > 0
    act_levers: list[tuple[str, _Change]] = []
    if has_acts and not training.flash_attention and not training.activation_checkpointing:
        act_levers.append(("FlashAttention (no s x s attention scores stored)", _with_flash))
    if has_acts and training.micro_batch_size > 1:
        act_levers.append(("micro-batch size 1 with gradient accumulation", _with_micro_batch_1))
    if has_acts and not training.activation_checkpointing:
        act_levers.append(("full activation recomputation (~33% more compute)", _with_recompute))

    any_single_fits = False
    stages = range(hardware.zero_stage + 1, 4)
    for stage in stages:
        m = _memory(inp, replace(base, zero_stage=stage))
        fits = fits_in_memory(m, device)
        if fits or stage == 3:
            any_single_fits = any_single_fits or fits
            advice.append(
                f"With ZeRO stage {stage} on {hardware.count} GPUs: {_gib(m.total)} per device, "
                f"{verdict(m)}."
            )
            break
    lower = None
    if training.precision in ("fp32", "tf32"):
        lower = lower_precision(gpu, training.precision)
    singles: list[tuple[str, _MemConfig]] = []
    if lower is not None:
        singles.append((f"{lower} mixed precision", replace(base, precision=lower)))
    for label, change in act_levers:
        singles.append((label, change(base)))
    for label, cfg in singles:
        m = _memory(inp, cfg)
        any_single_fits = any_single_fits or fits_in_memory(m, device)
        advice.append(f"With {label}: {_gib(m.total)} per device, {verdict(m)}.")

    if hardware.zero_stage == 0 and hardware.count > 1:
        advice.append(
            "At ZeRO stage 0 more GPUs do not lower memory per device: each data-parallel "
            "replica holds all model states."
        )
    best_gpus: tuple[int, int, MemoryBreakdown] | None = None
    for stage in range(max(hardware.zero_stage, 1), 4):
        found = _min_gpus_that_fit(inp, replace(base, zero_stage=stage), device)
        if found is not None and (best_gpus is None or found[0] < best_gpus[0]):
            best_gpus = (found[0], stage, found[1])
    if best_gpus is not None:
        n_gpus, stage, m = best_gpus
        advice.append(
            f"With ZeRO stage {stage}, {n_gpus} GPUs would fit: {_gib(m.total)} per device."
        )
    elif has_acts:
        advice.append(
            f"No GPU count fits as configured: activations alone take "
            f"{_gib(memory.activations)} per device; shrink them first."
        )

    if not any_single_fits:
        advice.append(_combination_advice(inp, gpu, base, act_levers))
    return advice


def _combination_advice(
    inp: EstimateInput,
    gpu: GpuModel,
    base: _MemConfig,
    act_levers: Sequence[tuple[str, _Change]],
) -> str:
    """The fewest combined changes that fit on the same GPUs, else the GPUs they need."""
    device = gpu.memory_bytes
    candidates: list[tuple[tuple[int, int, int], list[str], _MemConfig]] = []
    for mask in range(1 << len(act_levers)):
        chosen = [act_levers[i] for i in range(len(act_levers)) if mask >> i & 1]
        names = {change for _, change in chosen}
        if _with_flash in names and _with_recompute in names:
            # Recomputation already drops the attention scores: FlashAttention adds nothing.
            continue
        cfg = base
        for _, change in chosen:
            cfg = change(cfg)
        for stage in range(base.zero_stage, 4):
            labels = [label for label, _ in chosen]
            if stage != base.zero_stage:
                labels.insert(0, f"ZeRO stage {stage}")
            staged = replace(cfg, zero_stage=stage)
            # Prefer fewer changes, then a lower ZeRO stage, then no recomputation.
            key = (len(labels), stage, int(staged.recompute and not base.recompute))
            candidates.append((key, labels, staged))
    candidates.sort(key=lambda item: item[0])
    for _, labels, cfg in candidates:
        if len(labels) < 2:
            continue
        m = _memory(inp, cfg)
        if fits_in_memory(m, device):
            return (
                f"Combining {_and(labels)} on {base.gpus} GPUs: {_gib(m.total)} per device, fits."
            )
    # The smallest footprint tried: ZeRO-3 and every activation lever except FlashAttention
    # when recomputation is among them.
    smallest = replace(base, zero_stage=3)
    labels = [] if base.zero_stage == 3 else ["ZeRO stage 3"]
    has_recompute = any(change is _with_recompute for _, change in act_levers)
    for label, change in act_levers:
        if change is _with_flash and has_recompute:
            continue
        smallest = change(smallest)
        labels.append(label)
    found = _min_gpus_that_fit(inp, smallest, device)
    if found is not None and labels:
        return (
            f"Combining {_and(labels)}, {found[0]} GPUs would fit: "
            f"{_gib(found[1].total)} per device."
        )
    return (
        f"Nothing tried fits on the {gpu.name}; use tensor or pipeline parallelism, or a GPU "
        "with more memory."
    )


def _lever_text(lever: Lever, core: _Core) -> str:
    if lever.cost is not None and core.cost is not None:
        price = f"{_money_text(lever.cost)} instead of {_money_text(core.cost)}"
    else:
        price = f"{lever.gpu_hours:,.0f} GPU-hours instead of {core.time.gpu_hours:,.0f}"
    text = f"Cost lever, {lever.description}: {price}"
    if lever.loss_ratio is not None:
        text += (
            f"; Kaplan's scaling law expects a loss about {100 * (lever.loss_ratio - 1):.1f}% "
            "higher"
        )
    return text + "; let the validation metric judge the trade."


def estimate(inp: EstimateInput) -> EstimateResult:  # noqa: C901
    """FLOPs, time, memory per device, cost and plain-word advice for one training run.

    Sources: ``training_flops`` (Kaplan 2020), ``narayanan_training_flops`` (Narayanan 2021),
    ``time_from_flops`` / ``time_from_pilot``, ``memory_per_device`` (Rajbhandari 2020),
    ``activation_bytes`` (Korthikanti 2022), ``hourly_cost`` and ``kaplan_loss_ratio``.
    Time comes from the pilot when one is given ("pilot"), else from peak FLOP/s x utilization
    applied to the executed FLOPs ("assumed"). Tensor parallelism is assumed to run with
    sequence parallelism.
    """
    gpu = _validate(inp)
    model, training, hardware = inp.model, inp.training, inp.hardware
    core = _core(inp, gpu)

    narayanan = None
    if model.layers and model.hidden_size and model.vocab_size:
        narayanan = narayanan_training_flops(
            core.tokens,
            training.sequence_length,
            model.layers,
            model.hidden_size,
            model.vocab_size,
            recompute=training.activation_checkpointing,
        )

    cfg = _MemConfig(
        hardware.count,
        hardware.zero_stage,
        training.precision,
        training.activation_checkpointing,
        training.flash_attention,
        training.micro_batch_size,
        hardware.offload,
    )
    memory = _memory(inp, cfg)
    fits = fits_in_memory(memory, gpu.memory_bytes)
    activations_counted = bool(model.layers and model.hidden_size and model.attention_heads)

    pilot_utilization = None
    peak = gpu.peak_flops[training.precision]
    factor = _recompute_factor(training)
    if core.source == "pilot" and core.time.training_wall_hours > 0:
        seconds = core.time.training_wall_hours * _SECONDS_PER_HOUR
        mfu = core.model_flops / seconds / hardware.count / peak
        hfu = core.executed_flops / seconds / hardware.count / peak
        pilot_utilization = hfu
    elif hardware.utilization_kind == "mfu":
        mfu, hfu = hardware.utilization, hardware.utilization * factor
    else:
        mfu, hfu = hardware.utilization / factor, hardware.utilization

    deepspeed = None
    if hardware.zero_stage in (2, 3):
        deepspeed = deepspeed_zero_memory(
            model.parameters / (hardware.tensor_parallel * hardware.pipeline_parallel),
            data_parallel_degree(
                hardware.count, hardware.tensor_parallel, hardware.pipeline_parallel
            ),
            hardware.zero_stage,
            offload=hardware.offload,
            largest_layer_parameters=_largest_layer(model) / hardware.tensor_parallel,
            gpus_per_node=hardware.gpus_per_node,
        )

    energy = None
    if inp.energy is not None:
        tdp = inp.energy.tdp_watts or gpu.tdp_watts
        if tdp is None:
            raise EstimateInputError(
                "energy.tdp_watts", f"the catalog has no board power for the {gpu.name}; give it"
            )
        energy = energy_use(
            core.time.gpu_hours, tdp, inp.energy.pue, inp.energy.grid_kg_co2_per_kwh
        )

    failures = None
    if inp.reliability is not None:
        failures = _checkpointing(inp.reliability, core.time.training_wall_hours)
    weights_bytes, state_bytes = checkpoint_size_bytes(
        model.parameters, training.precision, training.optimizer
    )

    recommendations: list[str] = []
    if not fits:
        recommendations.extend(_fit_advice(inp, gpu, memory))
    elif memory.total > (1 - _TIGHT_HEADROOM) * gpu.memory_bytes:
        recommendations.append(
            f"Fits, but tightly: {_gib(memory.total)} of {_gib(gpu.memory_bytes)} per device; "
            "the CUDA context and allocator fragmentation are not counted."
        )
    if not activations_counted:
        recommendations.append(
            "Activation memory was not counted: give model.layers, model.hidden_size and "
            "model.attention_heads to include it."
        )
    if inp.pilot is None:
        recommendations.append(
            f"No pilot: time assumes {100 * hardware.utilization:.0f}% of the {gpu.name}'s "
            f"{training.precision} peak ({hardware.utilization_kind.upper()}: "
            f"MFU {100 * mfu:.1f}%, HFU {100 * hfu:.1f}%); measure a short pilot before launching."
        )
    else:
        recommendations.append(
            f"The pilot runs at MFU {100 * mfu:.1f}% (model FLOPs, PaLM's accounting) and HFU "
            f"{100 * hfu:.1f}% (FLOPs executed, recomputation included) of the {gpu.name}'s "
            f"{training.precision} peak."
        )
    if pilot_utilization is not None and pilot_utilization > 1:
        recommendations.append(
            f"The pilot implies {100 * pilot_utilization:.0f}% of peak FLOP/s, which is "
            "impossible: check the pilot throughput, its GPU count and model.parameters."
        )
    if inp.overheads is None:
        recommendations.append(
            "No overheads given: data loading, long inputs, validation, writing outputs and "
            "checkpoints were assumed to take zero hours; add them, extrapolating from a "
            "training step forgets them."
        )
    if deepspeed is not None:
        recommendations.append(
            f"DeepSpeed's own estimator (ZeRO-{hardware.zero_stage}, offload "
            f"{hardware.offload}) counts {_gib(deepspeed.per_gpu_bytes)} of model states per GPU "
            f"and {_gib(deepspeed.cpu_bytes)} of CPU memory per node, buffers included; the "
            "ZeRO paper's accounting above is the floor."
        )
    if energy is not None:
        recommendations.append(
            f"Energy: {energy.gpu_kwh:,.0f} kWh at the GPUs, {energy.facility_kwh:,.0f} kWh with "
            f"the facility's PUE, about {energy.kg_co2e / 1000:,.1f} t CO2e on this grid."
        )
    if failures is not None:
        recommendations.append(
            f"Checkpoint every {failures.daly_interval_minutes:,.0f} minutes (Daly; Young says "
            f"{failures.young_interval_minutes:,.0f}): failures and checkpoints are expected to "
            f"add {failures.expected_lost_hours:,.1f} h, {failures.wall_hours_with_failures:,.1f} "
            "h in all."
        )
    levers = _levers(inp, gpu)
    recommendations.extend(_lever_text(lever, core) for lever in levers)
    if inp.cost is not None:
        recommendations.append(
            "Hyper-parameter tuning multiplies the number of trainings: reserve budget beyond "
            "this run for experiments and failures."
        )

    return EstimateResult(
        training_flops=core.training_flops,
        executed_flops=core.executed_flops,
        narayanan_flops=narayanan,
        tokens=core.tokens,
        gpu_hours=core.time.gpu_hours,
        wall_hours=core.time.wall_hours,
        training_wall_hours=core.time.training_wall_hours,
        overhead_hours=core.time.overhead_hours,
        memory=memory,
        device_memory_bytes=gpu.memory_bytes,
        fits_in_memory=fits,
        activations_counted=activations_counted,
        cost=core.cost,
        time_source=core.source,
        pilot_utilization=pilot_utilization,
        data_parallel=data_parallel_degree(
            hardware.count, hardware.tensor_parallel, hardware.pipeline_parallel
        ),
        levers=levers,
        recommendations=recommendations,
        model_flops=core.model_flops,
        pf_days=core.training_flops / _PF_DAY,
        mfu=mfu,
        hfu=hfu,
        deepspeed=deepspeed,
        cpu_memory_bytes=None if deepspeed is None else deepspeed.cpu_bytes,
        energy=energy,
        checkpointing=failures,
        checkpoint_weights_bytes=weights_bytes,
        checkpoint_training_state_bytes=state_bytes,
    )


def _checkpointing(spec: ReliabilitySpec, training_hours: float) -> Checkpointing:
    """``checkpointing`` with the job's MTBF: given, or days x 24 / interruptions observed."""
    try:
        if spec.mtbf_hours is not None:
            mtbf = _in_range(spec.mtbf_hours, "reliability.mtbf_hours")
        elif spec.interruptions_count is not None and spec.interruptions_days is not None:
            count = _in_range(spec.interruptions_count, "reliability.interruptions.count")
            days = _in_range(spec.interruptions_days, "reliability.interruptions.days")
            mtbf = days * 24.0 / count
        else:
            raise EstimateInputError("mtbf_hours", "give mtbf_hours or interruptions")
        write = _in_range(spec.checkpoint_write_seconds, "reliability.checkpoint_write_seconds")
        return checkpointing(training_hours, write, mtbf)
    except EstimateInputError as error:
        name = error.field
        if name in ("count", "days"):
            name = f"interruptions.{name}"
        elif name not in ("mtbf_hours", "checkpoint_write_seconds"):
            # Daly's model overflowing: the checkpoint cost against the MTBF is the cause.
            name = "checkpoint_write_seconds"
        raise EstimateInputError(f"reliability.{name}", error.message) from None
