"""Time and cost of one configuration: the part every cost lever recomputes.

Rule: model FLOPs (PaLM's accounting), executed FLOPs (x 4/3 with full recomputation), then
time from the pilot if one is given, else from peak x utilization, then hourly cost
(docs/domain.md §9, §10).
Units: FLOPs, hours, ``Decimal`` money.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from catalog.domain.catalog import GpuModel
from estimates.domain.formulas.checks import MAX_AMOUNT, AmountOverflowError
from estimates.domain.formulas.cost import Money, hourly_cost
from estimates.domain.formulas.flops import (
    RECOMPUTE_FLOPS_FACTOR,
    model_flops_per_token,
    training_flops,
)
from estimates.domain.formulas.specs import (
    EstimateInput,
    TrainingSpec,
    samples_per_epoch,
    tokens_per_epoch,
)
from estimates.domain.formulas.time import (
    Overheads,
    TimeEstimate,
    time_from_flops,
    time_from_pilot,
)


@dataclass(frozen=True)
class Core:
    training_flops: float
    executed_flops: float
    model_flops: float
    tokens: float
    time: TimeEstimate
    source: Literal["pilot", "assumed"]
    cost: Money | None


def time_and_cost(inp: EstimateInput, gpu: GpuModel) -> Core:
    training, hardware = inp.training, inp.hardware
    tokens = tokens_per_epoch(training) * training.epochs
    flops = training_flops(inp.model.parameters, tokens)
    model = inp.model
    # PaLM appendix B: the attention term counts when the architecture is known.
    model_flops = tokens * model_flops_per_token(
        model.parameters, model.layers, model.hidden_size, training.sequence_length
    )
    executed = model_flops * recompute_factor(training)
    overheads = inp.overheads or Overheads()
    source: Literal["pilot", "assumed"]
    if inp.pilot is not None:
        pilot = inp.pilot
        pilot_gpus = pilot.gpus or hardware.count
        if pilot.tokens_per_second is not None:
            work, rate = tokens, pilot.tokens_per_second
        else:
            assert pilot.samples_per_second is not None
            work, rate = samples_per_epoch(training) * training.epochs, pilot.samples_per_second
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
    return Core(flops, executed, model_flops, tokens, time, source, money)


def recompute_factor(training: TrainingSpec) -> float:
    return RECOMPUTE_FLOPS_FACTOR if training.activation_checkpointing else 1.0
