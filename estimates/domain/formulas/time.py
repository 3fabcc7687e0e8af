"""Wall hours and GPU-hours from FLOPs at a utilization, or from a measured pilot.

Rule: wall hours = FLOPs / (GPUs x peak FLOP/s x utilization) / 3600, or work / measured
throughput scaled linearly over GPUs; the stages extrapolation forgets (loading, validation,
outputs, checkpoint I/O) are added as overheads (docs/domain.md §7, §10).
Units: hours (float); GPU-hours = wall hours x GPUs (what hourly rental bills).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from estimates.domain.formulas.checks import check_utilization, non_negative, positive, positive_int

SECONDS_PER_HOUR: Final = 3600.0


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
        positive_int(gpus, "gpus")
        * positive(peak_flops, "peak_flops")
        * check_utilization(utilization)
    )
    return non_negative(flops, "flops") / denominator / SECONDS_PER_HOUR


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
    per_gpu = positive(measured_per_second, "measured_per_second") / positive_int(
        pilot_gpus, "pilot_gpus"
    )
    throughput = per_gpu * positive_int(gpus, "gpus")
    return non_negative(work, "work") / throughput / SECONDS_PER_HOUR


def overhead_hours(training_wall_hours: float, overheads: Overheads) -> float:
    """Extra wall hours: loading + long inputs + validation + outputs + checkpoint I/O.

    Source: docs/domain.md §7 (calendar stages that step extrapolation forgets) and
    §11 (checkpoint write/transfer/restore time counts).
    """
    train = non_negative(training_wall_hours, "training_wall_hours")
    return (
        train * non_negative(overheads.validation_fraction, "validation_fraction")
        + non_negative(overheads.loading_hours, "loading_hours")
        + non_negative(overheads.long_input_hours, "long_input_hours")
        + non_negative(overheads.output_hours, "output_hours")
        + non_negative(overheads.checkpoint_hours, "checkpoint_hours")
    )


def time_estimate(training_hours: float, gpus: int, overheads: Overheads) -> TimeEstimate:
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
    return time_estimate(hours, gpus, overheads or Overheads())


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
    return time_estimate(hours, gpus, overheads or Overheads())
