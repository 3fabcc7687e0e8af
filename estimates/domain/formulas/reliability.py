"""Checkpoints: their size, the optimal interval between them, and the cost of failures.

Rule: a checkpoint holds the weights and, to resume, the fp32 master copy and the optimizer
moments (ZeRO paper accounting); Young (1974) and Daly (2006) give the interval that minimises
expected wall time under Poisson failures, and Daly the expected wall time itself
(docs/domain.md §11).
Units: bytes; hours, except the API's checkpoint write time (seconds) and intervals (minutes).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from estimates.domain.formulas.checks import EstimateInputError, in_range, non_negative, positive
from estimates.domain.formulas.memory import model_state_bytes_per_parameter
from estimates.domain.formulas.specs import ReliabilitySpec
from estimates.domain.formulas.time import SECONDS_PER_HOUR


def checkpoint_size_bytes(parameters: float, precision: str, optimizer: str) -> tuple[int, int]:
    """(weights, training_state) bytes of a checkpoint.

    Weights are saved at the training precision (2 bytes mixed, 4 fp32); the training state adds
    the fp32 master copy and the optimizer moments, i.e. the ZeRO paper's weights + optimizer
    bytes per parameter (Rajbhandari et al. 2020, section 3.1: 2 + 12 for mixed Adam; gradients
    are not saved). A 7B bf16 AdamW model: 14 GB of weights, 98 GB of training state.
    """
    per = model_state_bytes_per_parameter(precision, optimizer)
    p = positive(parameters, "parameters")
    return math.ceil(p * per.weights), math.ceil(p * (per.weights + per.optimizer))


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
    m = positive(mtbf, "mtbf")
    tau = positive(interval, "interval")
    delta = positive(checkpoint_cost, "checkpoint_cost")
    exponent = (tau + 2.0 * delta) / m
    # Beyond e^50 the job practically never finishes (and e^700 would overflow a float).
    if exponent > 50:
        raise EstimateInputError(
            "checkpoint_cost",
            "a checkpoint takes so much longer than the mean time between failures that the job "
            "would never finish",
        )
    return (
        m * math.exp(delta / m) * math.expm1((tau + delta) / m) * non_negative(solve, "solve") / tau
    )


def checkpointing(
    training_hours: float, checkpoint_write_seconds: float, mtbf_hours: float
) -> Checkpointing:
    """Young's and Daly's intervals, and wall time with failures at Daly's interval.

    Source: ``young_interval`` (Young 1974), ``daly_interval`` and ``daly_wall_time`` (Daly
    2006). ``expected_lost_hours`` is that wall time minus the failure-free training hours:
    checkpoint writes, rework after each failure and restarts.
    """
    c = positive(checkpoint_write_seconds, "checkpoint_write_seconds") / SECONDS_PER_HOUR
    m = positive(mtbf_hours, "mtbf_hours")
    young = young_interval(c, m)
    daly = daly_interval(c, m)
    wall = daly_wall_time(training_hours, daly, c, m)
    return Checkpointing(young * 60.0, daly * 60.0, wall - training_hours, wall)


# --------------------------------------------------------------------------------- checkpoints


def young_interval(checkpoint_cost: float, mtbf: float) -> float:
    """Optimal checkpoint interval sqrt(2 C M), in the unit of the inputs.

    Source: Young (1974), "A first order approximation to the optimum checkpoint interval",
    CACM 17(9). C = time to write one checkpoint, M = mean time between failures.
    """
    return math.sqrt(2.0 * positive(checkpoint_cost, "checkpoint_cost") * positive(mtbf, "mtbf"))


def daly_interval(checkpoint_cost: float, mtbf: float) -> float:
    """Daly's higher-order optimum checkpoint interval, in the unit of the inputs.

    Source: Daly (2006), "A higher order estimate of the optimum checkpoint interval for
    restart dumps", FGCS 22(3), eq. (37): for C < 2M,
    tau = sqrt(2 C M) [1 + (1/3) sqrt(C / (2M)) + (1/9) (C / (2M))] - C; otherwise tau = M.
    """
    c = positive(checkpoint_cost, "checkpoint_cost")
    m = positive(mtbf, "mtbf")
    if c >= 2.0 * m:
        return m
    x = c / (2.0 * m)
    return math.sqrt(2.0 * c * m) * (1.0 + math.sqrt(x) / 3.0 + x / 9.0) - c


def checkpointing_for(spec: ReliabilitySpec, training_hours: float) -> Checkpointing:
    """``checkpointing`` with the job's MTBF: given, or days x 24 / interruptions observed."""
    try:
        if spec.mtbf_hours is not None:
            mtbf = in_range(spec.mtbf_hours, "reliability.mtbf_hours")
        elif spec.interruptions_count is not None and spec.interruptions_days is not None:
            count = in_range(spec.interruptions_count, "reliability.interruptions.count")
            days = in_range(spec.interruptions_days, "reliability.interruptions.days")
            mtbf = days * 24.0 / count
        else:
            raise EstimateInputError("mtbf_hours", "give mtbf_hours or interruptions")
        write = in_range(spec.checkpoint_write_seconds, "reliability.checkpoint_write_seconds")
        return checkpointing(training_hours, write, mtbf)
    except EstimateInputError as error:
        name = error.field
        if name in ("count", "days"):
            name = f"interruptions.{name}"
        elif name not in ("mtbf_hours", "checkpoint_write_seconds"):
            # Daly's model overflowing: the checkpoint cost against the MTBF is the cause.
            name = "checkpoint_write_seconds"
        raise EstimateInputError(f"reliability.{name}", error.message) from None
