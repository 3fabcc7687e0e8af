"""One training job on each candidate GPU, as the hardware options rank it (docs/domain.md §24.11).

The job is priced on a GPU from its pilot where the pilot ran; elsewhere the pilot is carried to
that GPU (its utilization without its own communication, times the measured or roofline
speed-up over the peaks' ratio: "projected"); without a pilot, at the assumed utilization. A GPU
without the job's precision, or one the job does not fit in, is not a candidate: the reason is
said instead. Pure: the formulas' input for a GPU is built by the caller's ``inputs``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from catalog.domain import catalog
from estimates.domain import formulas
from estimates.domain.formulas.projection import speedup, training_intensity
from estimates.domain.hardware_options import Excluded, TimeSource, Work

# The formulas' input for request data on a GPU (the API's parsing, estimates/api/serializers).
Inputs = Callable[[dict[str, Any], catalog.GpuModel], formulas.EstimateInput]


@dataclass(frozen=True)
class JobOnGpus:
    works_on: dict[str, list[Work]]  # GPU name → the job on it
    gpus: list[catalog.GpuModel]  # the GPUs the job runs on
    excluded: list[Excluded]


def job_on_gpus(
    data: dict[str, Any],
    candidates: Sequence[catalog.GpuModel],
    pilot_gpu: catalog.GpuModel,
    inputs: Inputs,
) -> JobOnGpus:
    """The job of request ``data`` on every candidate GPU; raises ``formulas.EstimateInputError``
    naming the field for an impossible pilot."""
    precision = data["training"]["precision"]
    measured = None
    if data.get("pilot"):
        measured = formulas.estimate(inputs(data, pilot_gpu))
        if measured.mfu > 1:
            raise formulas.EstimateInputError(
                "pilot.tokens_per_second",
                f"implies {100 * measured.mfu:.0f}% of the {pilot_gpu.name}'s peak, "
                "which is impossible",
            )
    found = JobOnGpus({}, [], [])
    for candidate in candidates:
        work, reason = _job_on(data, candidate, pilot_gpu, measured, precision, inputs)
        if work is None:
            found.excluded.append(Excluded(candidate.name, reason))
        else:
            found.works_on[candidate.name] = [work]
            found.gpus.append(candidate)
    return found


def _job_on(
    data: dict[str, Any],
    candidate: catalog.GpuModel,
    pilot_gpu: catalog.GpuModel,
    measured: formulas.EstimateResult | None,
    precision: str,
    inputs: Inputs,
) -> tuple[Work | None, str]:
    """The job on ``candidate``; None with the reason when the GPU lacks the precision or the
    memory."""
    if not candidate.supports(precision):
        return None, f"no {precision} peak"
    changed = dict(data)
    source: TimeSource = "assumed"
    if measured is not None:
        if candidate.name == pilot_gpu.name:
            source = "pilot"
        else:
            changed["pilot"] = None
            changed["hardware"] = {
                **data["hardware"],
                "utilization": _carried_utilization(data, measured, pilot_gpu, candidate, inputs),
                "utilization_kind": "mfu",
            }
            source = "projected"
    result = formulas.estimate(inputs(changed, candidate))
    ran_here = measured is not None and candidate.name == pilot_gpu.name
    if not result.fits_in_memory and not ran_here:  # a pilot ran there: it fits
        return None, (
            f"needs {result.memory.total / 2**30:,.1f} GiB per device, has "
            f"{candidate.memory_bytes / 2**30:,.1f} GiB"
        )
    work = Work(
        key="job",
        name="the job",
        gpu=candidate.name,
        wall_hours=result.wall_hours,
        gpus=data["hardware"]["count"],
        precision=precision,
        memory_bytes_per_gpu=result.memory.total,
        time_source=source,
    )
    return work, ""


def _carried_utilization(
    data: dict[str, Any],
    measured: formulas.EstimateResult,
    own: catalog.GpuModel,
    candidate: catalog.GpuModel,
    inputs: Inputs,
) -> float:
    """The candidate's MFU: the pilot's, its own communication taken out (the candidate's is
    counted on its links), times the speed-up over the peaks' ratio."""
    precision = data["training"]["precision"]
    comm = measured.communication
    efficiency = comm.scaling_efficiency if comm is not None else 1.0
    flops_per_token = measured.executed_flops / measured.tokens if measured.tokens else 0.0
    intensity = training_intensity(inputs(data, own), measured.memory, flops_per_token)
    ratio = speedup(own, candidate, precision, intensity).ratio
    peaks = own.peak_flops[precision] / candidate.peak_flops[precision]
    return min(max(measured.mfu / efficiency * ratio * peaks, 0.001), 1.0)
