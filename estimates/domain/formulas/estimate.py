"""The estimate of one training run (POST /estimates/preview/): validation, FLOPs, time, memory,
cost, energy, checkpointing and advice composed.

Units: as each family's module states.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final, Literal

from catalog.domain.catalog import GpuModel
from estimates.domain.formulas.adapters import (
    adapter_checkpoint_bytes,
    frozen_base_bytes,
    trainable_parameters,
)
from estimates.domain.formulas.advice import Findings, recommendations
from estimates.domain.formulas.checks import EstimateInputError
from estimates.domain.formulas.communication import Communication
from estimates.domain.formulas.core import Core, recompute_factor, time_and_cost
from estimates.domain.formulas.cost import Money
from estimates.domain.formulas.deepspeed import DeepSpeedMemory, deepspeed_zero_memory
from estimates.domain.formulas.energy import Energy, energy_use
from estimates.domain.formulas.flops import narayanan_training_flops
from estimates.domain.formulas.intervals import Interval
from estimates.domain.formulas.levers import Lever, cost_levers
from estimates.domain.formulas.memory import (
    MemoryBreakdown,
    data_parallel_degree,
    fits_in_memory,
    job_memory,
    largest_layer,
    memory_config,
)
from estimates.domain.formulas.ranges import cost_range, fits_with_range, memory_range, time_range
from estimates.domain.formulas.reliability import (
    Checkpointing,
    checkpoint_size_bytes,
    checkpointing_for,
)
from estimates.domain.formulas.specs import EstimateInput
from estimates.domain.formulas.time import (
    SECONDS_PER_HOUR,
)
from estimates.domain.formulas.validation import validate
from estimates.domain.formulas.work import memory_parameters

# One petaflop/s-day (Brown et al. 2020, table D.1 reports GPT-3 in these units).
PF_DAY: Final = 1e15 * 86_400


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
    # docs/domain.md §24: the parameters that train, what an adapter checkpoint weighs (None
    # for full training), and the step's communication.
    trainable_parameters: float = 0.0
    checkpoint_adapter_bytes: int | None = None
    communication: Communication | None = None
    samples: float = 0.0
    # docs/domain.md §24.12: the 80% ranges; "fits" is the memory range's high end fitting.
    time_interval: Interval | None = None
    memory_interval: Interval | None = None
    cost_interval: tuple[Money, Money] | None = None
    fits_at_estimate: bool = True


def estimate(inp: EstimateInput) -> EstimateResult:
    """FLOPs, time, memory per device, cost and plain-word advice for one training run.

    Sources: ``training_flops`` (Kaplan 2020), ``narayanan_training_flops`` (Narayanan 2021),
    ``time_from_flops`` / ``time_from_pilot``, ``memory_per_device`` (Rajbhandari 2020),
    ``activation_bytes`` (Korthikanti 2022), ``hourly_cost`` and ``kaplan_loss_ratio``.
    Time comes from the pilot when one is given ("pilot"), else from peak FLOP/s x utilization
    applied to the executed FLOPs ("assumed"). Tensor parallelism is assumed to run with
    sequence parallelism.
    """
    gpu = validate(inp)
    core = time_and_cost(inp, gpu)
    memory = job_memory(inp, memory_config(inp))
    mfu, hfu, pilot_utilization = _utilizations(inp, gpu, core)
    findings = Findings(
        gpu=gpu,
        core=core,
        memory=memory,
        fits=fits_with_range(inp, memory, gpu.memory_bytes),
        activations_counted=_activations_counted(inp),
        mfu=mfu,
        hfu=hfu,
        pilot_utilization=pilot_utilization,
        deepspeed=_deepspeed(inp),
        energy=_energy(inp, gpu, core),
        failures=None
        if inp.reliability is None
        else checkpointing_for(inp.reliability, core.time.training_wall_hours),
        levers=cost_levers(inp, gpu),
        time_range=time_range(inp, gpu, core.time.wall_hours, core.source),
        memory_range=memory_range(inp, memory),
    )
    return _result(inp, findings, recommendations(inp, findings))


def _activations_counted(inp: EstimateInput) -> bool:
    model = inp.model
    if inp.training.activation_bytes_per_sample is not None:
        return True
    return bool(model.layers and model.hidden_size and model.attention_heads)


def _narayanan(inp: EstimateInput, tokens: float) -> float | None:
    """Narayanan's architecture-aware FLOPs, when the layers, width and vocabulary are known."""
    model, training = inp.model, inp.training
    if not (model.layers and model.hidden_size and model.vocab_size):
        return None
    return narayanan_training_flops(
        tokens,
        training.sequence_length,
        model.layers,
        model.hidden_size,
        model.vocab_size,
        recompute=training.activation_checkpointing,
    )


def _utilizations(
    inp: EstimateInput, gpu: GpuModel, core: Core
) -> tuple[float, float, float | None]:
    """(MFU, HFU, the pilot's HFU or None): measured from a pilot, else from the assumption."""
    hardware = inp.hardware
    peak = gpu.peak_flops[inp.training.precision]
    factor = recompute_factor(inp.training)
    if core.source == "pilot" and core.time.training_wall_hours > 0:
        seconds = core.time.training_wall_hours * SECONDS_PER_HOUR
        mfu = core.model_flops / seconds / hardware.count / peak
        hfu = core.executed_flops / seconds / hardware.count / peak
        return mfu, hfu, hfu
    if hardware.utilization_kind == "mfu":
        return hardware.utilization, hardware.utilization * factor, None
    return hardware.utilization / factor, hardware.utilization, None


def _deepspeed(inp: EstimateInput) -> DeepSpeedMemory | None:
    """DeepSpeed's own estimator for ZeRO stages 2 and 3 on the model-parallel shard."""
    model, hardware = inp.model, inp.hardware
    # ZeRO-Offload runs at stage 1 as at 2 (DeepSpeed's tutorial): the stage-2 estimator.
    stage = 2 if hardware.zero_stage == 1 and hardware.offload != "none" else hardware.zero_stage
    if stage not in (2, 3) or inp.training.method != "full":
        return None
    return deepspeed_zero_memory(
        memory_parameters(inp) / (hardware.tensor_parallel * hardware.pipeline_parallel),
        data_parallel_degree(hardware.count, hardware.tensor_parallel, hardware.pipeline_parallel),
        stage,
        offload=hardware.offload,
        largest_layer_parameters=largest_layer(model) / hardware.tensor_parallel,
        gpus_per_node=hardware.gpus_per_node,
    )


def _energy(inp: EstimateInput, gpu: GpuModel, core: Core) -> Energy | None:
    if inp.energy is None:
        return None
    tdp = inp.energy.tdp_watts or gpu.tdp_watts
    if tdp is None:
        raise EstimateInputError(
            "energy.tdp_watts", f"the catalog has no board power for the {gpu.name}; give it"
        )
    return energy_use(core.time.gpu_hours, tdp, inp.energy.pue, inp.energy.grid_kg_co2_per_kwh)


def _result(inp: EstimateInput, found: Findings, advice: list[str]) -> EstimateResult:
    model, training, hardware = inp.model, inp.training, inp.hardware
    core = found.core
    weights_bytes, state_bytes = checkpoint_size_bytes(
        model.parameters, training.precision, training.optimizer
    )
    trainable = trainable_parameters(model, training)
    if training.method != "full":
        # The frozen base is not rewritten; resuming needs the adapter and its optimizer.
        weights_bytes = frozen_base_bytes(model, training, model.parameters)
        state_bytes = checkpoint_size_bytes(trainable, training.precision, training.optimizer)[1]
    return EstimateResult(
        training_flops=core.training_flops,
        executed_flops=core.executed_flops,
        narayanan_flops=_narayanan(inp, core.tokens),
        tokens=core.tokens,
        gpu_hours=core.time.gpu_hours,
        wall_hours=core.time.wall_hours,
        training_wall_hours=core.time.training_wall_hours,
        overhead_hours=core.time.overhead_hours,
        memory=found.memory,
        device_memory_bytes=found.gpu.memory_bytes,
        fits_in_memory=found.fits,
        activations_counted=found.activations_counted,
        cost=core.cost,
        time_source=core.source,
        pilot_utilization=found.pilot_utilization,
        data_parallel=data_parallel_degree(
            hardware.count, hardware.tensor_parallel, hardware.pipeline_parallel
        ),
        levers=found.levers,
        recommendations=advice,
        model_flops=core.model_flops,
        pf_days=core.training_flops / PF_DAY,
        mfu=found.mfu,
        hfu=found.hfu,
        deepspeed=found.deepspeed,
        cpu_memory_bytes=None if found.deepspeed is None else found.deepspeed.cpu_bytes,
        energy=found.energy,
        checkpointing=found.failures,
        checkpoint_weights_bytes=weights_bytes,
        checkpoint_training_state_bytes=state_bytes,
        trainable_parameters=trainable,
        checkpoint_adapter_bytes=adapter_checkpoint_bytes(inp),
        communication=core.communication,
        samples=core.samples,
        time_interval=found.time_range,
        memory_interval=found.memory_range,
        cost_interval=None
        if core.cost is None
        else cost_range(core.cost, found.time_range, core.time.wall_hours),
        fits_at_estimate=fits_in_memory(found.memory, found.gpu.memory_bytes),
    )
