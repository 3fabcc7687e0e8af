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

Layout
------
One module per formula family, re-exported here so ``from estimates.domain.formulas import X``
and ``formulas.X`` work: ``specs`` (the input) and ``validation``; ``flops``, ``memory`` (with
``deepspeed``), ``time``, ``cost``, ``energy``, ``reliability`` (checkpoint size, interval and
failures), ``scaling``, ``serving``; ``core`` (time and cost of one configuration), ``levers``,
``advice`` (the words) and ``estimate`` composing them. ``checks`` and ``wording`` are shared.
"""

from __future__ import annotations

from estimates.domain.formulas.activations import activation_bytes
from estimates.domain.formulas.adapters import bits_per_weight
from estimates.domain.formulas.checks import (
    LIMITS,
    MAX_AMOUNT,
    AmountOverflowError,
    EstimateInputError,
)
from estimates.domain.formulas.communication import Communication
from estimates.domain.formulas.cost import Money, hourly_cost, lot_cost, scaled_amount
from estimates.domain.formulas.deepspeed import (
    DeepSpeedMemory,
    deepspeed_model_states_bytes,
    deepspeed_zero_memory,
)
from estimates.domain.formulas.energy import Energy, energy_use
from estimates.domain.formulas.estimate import EstimateResult, estimate
from estimates.domain.formulas.flops import (
    RECOMPUTE_FLOPS_FACTOR,
    inference_flops,
    model_flops_per_token,
    narayanan_flops_per_iteration,
    narayanan_training_flops,
    training_flops,
)
from estimates.domain.formulas.intervals import (
    Interval,
    interval,
    overrun_probability,
    time_kind,
)
from estimates.domain.formulas.levers import Lever, lower_precision
from estimates.domain.formulas.memory import (
    MemoryBreakdown,
    StateBytes,
    data_parallel_degree,
    fits_in_memory,
    memory_per_device,
    model_state_bytes_per_parameter,
)
from estimates.domain.formulas.ranges import cost_range
from estimates.domain.formulas.reliability import (
    Checkpointing,
    checkpoint_size_bytes,
    checkpointing,
    daly_interval,
    daly_wall_time,
    young_interval,
)
from estimates.domain.formulas.scaling import (
    CHINCHILLA_TOKENS_PER_PARAMETER,
    KAPLAN_ALPHA_DATA,
    KAPLAN_ALPHA_PARAMETERS,
    SCALING_LAWS,
    ComputeOptimal,
    ScalingLever,
    chinchilla_fit,
    chinchilla_optimal,
    kaplan_loss_ratio,
    scaling_levers,
)
from estimates.domain.formulas.serving import (
    HOURS_PER_MONTH,
    InferenceProjection,
    LocalServing,
    ServingProjection,
    break_even_months,
    cost_per_million_tokens,
    gpus_per_replica,
    inference_projection,
    kv_cache_bytes,
    serving_projection,
)
from estimates.domain.formulas.specs import (
    ARCHITECTURES,
    EXPERT_PLACEMENTS,
    FUSED_MODULES,
    LOSSES,
    METHODS,
    MODULE_ALIASES,
    OFFLOADS,
    OPTIMIZERS,
    PRECISIONS,
    QUANTIZATIONS,
    TARGET_MODULES,
    UTILIZATION_KINDS,
    WEIGHT_PRECISIONS,
    CostSpec,
    EnergySpec,
    EstimateInput,
    HardwareSpec,
    LoraSpec,
    ModelSpec,
    ModuleShape,
    PilotSpec,
    ReliabilitySpec,
    TrainingSpec,
    input_from_spec,
    lora_spec,
)
from estimates.domain.formulas.time import (
    Overheads,
    TimeEstimate,
    gpu_hours,
    overhead_hours,
    pilot_wall_hours,
    time_from_flops,
    time_from_pilot,
    wall_hours,
)

__all__ = [
    "ARCHITECTURES",
    "CHINCHILLA_TOKENS_PER_PARAMETER",
    "EXPERT_PLACEMENTS",
    "FUSED_MODULES",
    "HOURS_PER_MONTH",
    "KAPLAN_ALPHA_DATA",
    "KAPLAN_ALPHA_PARAMETERS",
    "LIMITS",
    "LOSSES",
    "MAX_AMOUNT",
    "METHODS",
    "MODULE_ALIASES",
    "OFFLOADS",
    "OPTIMIZERS",
    "PRECISIONS",
    "QUANTIZATIONS",
    "RECOMPUTE_FLOPS_FACTOR",
    "SCALING_LAWS",
    "TARGET_MODULES",
    "UTILIZATION_KINDS",
    "WEIGHT_PRECISIONS",
    "AmountOverflowError",
    "Checkpointing",
    "Communication",
    "ComputeOptimal",
    "CostSpec",
    "DeepSpeedMemory",
    "Energy",
    "EnergySpec",
    "EstimateInput",
    "EstimateInputError",
    "EstimateResult",
    "HardwareSpec",
    "InferenceProjection",
    "Interval",
    "Lever",
    "LocalServing",
    "LoraSpec",
    "MemoryBreakdown",
    "ModelSpec",
    "ModuleShape",
    "Money",
    "Overheads",
    "PilotSpec",
    "ReliabilitySpec",
    "ScalingLever",
    "ServingProjection",
    "StateBytes",
    "TimeEstimate",
    "TrainingSpec",
    "activation_bytes",
    "bits_per_weight",
    "break_even_months",
    "checkpoint_size_bytes",
    "checkpointing",
    "chinchilla_fit",
    "chinchilla_optimal",
    "cost_per_million_tokens",
    "cost_range",
    "daly_interval",
    "daly_wall_time",
    "data_parallel_degree",
    "deepspeed_model_states_bytes",
    "deepspeed_zero_memory",
    "energy_use",
    "estimate",
    "fits_in_memory",
    "gpu_hours",
    "gpus_per_replica",
    "hourly_cost",
    "inference_flops",
    "inference_projection",
    "input_from_spec",
    "interval",
    "kaplan_loss_ratio",
    "kv_cache_bytes",
    "lora_spec",
    "lot_cost",
    "lower_precision",
    "memory_per_device",
    "model_flops_per_token",
    "model_state_bytes_per_parameter",
    "narayanan_flops_per_iteration",
    "narayanan_training_flops",
    "overhead_hours",
    "overrun_probability",
    "pilot_wall_hours",
    "scaled_amount",
    "scaling_levers",
    "serving_projection",
    "time_from_flops",
    "time_from_pilot",
    "time_kind",
    "training_flops",
    "wall_hours",
    "young_interval",
]
