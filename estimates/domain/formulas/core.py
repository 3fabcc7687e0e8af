"""Time and cost of one configuration: the part every cost lever recomputes.

Rule: model FLOPs by method (``work``), executed FLOPs (one more forward with full
recomputation), then time from the pilot if one is given (rescaled to the training's sequence
length), else from peak x utilization, the communication that does not overlap added
(``communication``), then hourly cost (docs/domain.md §9, §10, §24).
Units: FLOPs, hours, ``Decimal`` money.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

from catalog.domain.catalog import GpuModel
from estimates.domain.formulas.checks import MAX_AMOUNT, AmountOverflowError
from estimates.domain.formulas.communication import Communication, job_communication
from estimates.domain.formulas.cost import Money, hourly_cost
from estimates.domain.formulas.flops import RECOMPUTE_FLOPS_FACTOR
from estimates.domain.formulas.specs import EstimateInput, TrainingSpec, samples_per_epoch
from estimates.domain.formulas.time import (
    SECONDS_PER_HOUR,
    Overheads,
    TimeEstimate,
    pilot_wall_hours,
    time_estimate,
    wall_hours,
)
from estimates.domain.formulas.work import RunWork, run_work, sequence_rescale


@dataclass(frozen=True)
class Core:
    training_flops: float
    executed_flops: float
    model_flops: float
    tokens: float
    time: TimeEstimate
    source: Literal["pilot", "assumed"]
    cost: Money | None
    communication: Communication | None = None
    samples: float = 0.0


def time_and_cost(inp: EstimateInput, gpu: GpuModel) -> Core:
    """FLOPs (§24), training hours from the pilot or the assumed utilization, the exposed
    communication (§24.6) added, then the hourly cost."""
    training, hardware = inp.training, inp.hardware
    work = run_work(inp)
    overheads = inp.overheads or Overheads()
    source: Literal["pilot", "assumed"]
    if inp.pilot is not None:
        hours, comm = _pilot_hours(inp, gpu, work)
        source = "pilot"
    else:
        peak = gpu.peak_flops[training.precision]
        # MFU divides model FLOPs, HFU the FLOPs executed (with recomputation): same time.
        flops = work.model_flops if hardware.utilization_kind == "mfu" else work.executed_flops
        compute = wall_hours(flops, hardware.count, peak, hardware.utilization)
        comm = job_communication(inp, gpu, hardware.count, compute * SECONDS_PER_HOUR)
        hours = compute / comm.scaling_efficiency
        source = "assumed"
    time = time_estimate(hours, hardware.count, overheads)
    money = _cost(inp, time)
    return Core(
        work.training_flops,
        work.executed_flops,
        work.model_flops,
        work.tokens,
        time,
        source,
        money,
        comm,
        work.samples,
    )


def _pilot_hours(inp: EstimateInput, gpu: GpuModel, work: RunWork) -> tuple[float, Communication]:
    """The pilot's throughput, rescaled to the training's sequence length (§24.4), scaled
    linearly to the GPU count and corrected by the scaling efficiency at each count (§24.6)."""
    training, hardware = inp.training, inp.hardware
    pilot = inp.pilot
    assert pilot is not None
    pilot_gpus = pilot.gpus or hardware.count
    rescale = sequence_rescale(inp)
    if pilot.tokens_per_second is not None:
        amount, rate = work.tokens, pilot.tokens_per_second * rescale
    else:
        assert pilot.samples_per_second is not None
        amount = samples_per_epoch(training) * training.epochs
        rate = pilot.samples_per_second * rescale
    linear = pilot_wall_hours(amount, rate, pilot_gpus, hardware.count)
    comm = job_communication(inp, gpu, hardware.count, linear * SECONDS_PER_HOUR)
    as_run = _as_piloted(inp)
    if pilot_gpus == hardware.count and as_run is inp:
        # Measured at this count and shape: its communication is already in the throughput.
        return linear, comm
    at_pilot = job_communication(
        as_run, gpu, pilot_gpus, linear * hardware.count / pilot_gpus * SECONDS_PER_HOUR
    )
    return linear * at_pilot.scaling_efficiency / comm.scaling_efficiency, comm


def _as_piloted(inp: EstimateInput) -> EstimateInput:
    """The run with the pilot's own micro-batch (its communication per token differs)."""
    pilot = inp.pilot
    micro = None if pilot is None else pilot.micro_batch_size
    if micro is None or micro == inp.training.micro_batch_size:
        return inp
    return replace(inp, training=replace(inp.training, micro_batch_size=micro))


def _cost(inp: EstimateInput, time: TimeEstimate) -> Money | None:
    if inp.cost is None:
        return None
    try:
        amount = hourly_cost(
            inp.hardware.count, time.wall_hours, inp.cost.hourly_rate_per_gpu, inp.cost.extra
        )
    except AmountOverflowError as error:
        # The rate is the input that turns (in-range) hours into money; name it, with the
        # hours it was applied to, rather than an internal "hours".
        raise AmountOverflowError(
            "cost.hourly_rate_per_gpu",
            f"{time.gpu_hours:.3g} GPU-hours at this rate cost more than the largest amount "
            f"handled ({MAX_AMOUNT:.0e} {inp.cost.currency}): {error.message}",
        ) from None
    return Money(amount, inp.cost.currency)


def recompute_factor(training: TrainingSpec) -> float:
    return RECOMPUTE_FLOPS_FACTOR if training.activation_checkpointing else 1.0
