"""Plain-word advice: how to make a job fit, and the estimate's recommendations.

Rule: every suggestion states the bytes per device it was computed at (ZeRO stage, FlashAttention,
micro-batch 1, recomputation, more GPUs, their combinations); nothing is suggested that was not
recomputed (docs/domain.md §10).
Units: bytes per device, shown as GiB.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Final

from catalog.domain.catalog import GpuModel
from estimates.domain.formulas.core import Core
from estimates.domain.formulas.deepspeed import DeepSpeedMemory
from estimates.domain.formulas.energy import Energy
from estimates.domain.formulas.intervals import Interval
from estimates.domain.formulas.levers import Lever, lever_text, lower_precision
from estimates.domain.formulas.memory import (
    MemConfig,
    MemoryBreakdown,
    job_memory,
    memory_config,
)
from estimates.domain.formulas.notes import communication_notes, method_notes, sequence_notes
from estimates.domain.formulas.ranges import fits_with_range, memory_range, range_notes
from estimates.domain.formulas.reliability import Checkpointing
from estimates.domain.formulas.specs import EstimateInput
from estimates.domain.formulas.wording import gib, join_and

# Upper bound for "how many GPUs would fit" searches; beyond this the advice is meaningless.
MAX_GPUS: Final = 65536
# Under this headroom the fit is called tight: allocator fragmentation and the CUDA context
# (not modelled) commonly take several percent of device memory.
TIGHT_HEADROOM: Final = 0.10


def min_gpus_that_fit(
    inp: EstimateInput, cfg: MemConfig, device: int
) -> tuple[int, MemoryBreakdown] | None:
    """Smallest GPU count (a multiple of tp x pp) at which ``cfg`` fits, by bisection."""
    model_parallel = inp.hardware.tensor_parallel * inp.hardware.pipeline_parallel
    low = cfg.gpus // model_parallel
    high = MAX_GPUS // model_parallel

    def at(dp: int) -> MemoryBreakdown:
        return job_memory(inp, replace(cfg, gpus=dp * model_parallel))

    if high < low or not fits_with_range(inp, at(high), device):
        return None
    # Memory per device never grows with the data-parallel degree, so bisection is valid.
    while low < high:
        middle = (low + high) // 2
        if fits_with_range(inp, at(middle), device):
            high = middle
        else:
            low = middle + 1
    return low * model_parallel, at(low)


Change = Callable[[MemConfig], MemConfig]


def with_flash(cfg: MemConfig) -> MemConfig:
    return replace(cfg, flash=True)


def with_micro_batch_1(cfg: MemConfig) -> MemConfig:
    return replace(cfg, micro_batch=1)


def with_recompute(cfg: MemConfig) -> MemConfig:
    return replace(cfg, recompute=True)


def fit_advice(inp: EstimateInput, gpu: GpuModel, memory: MemoryBreakdown) -> list[str]:
    """Plain-word ways to fit, each with its computed bytes per device."""
    device = gpu.memory_bytes
    base = memory_config(inp)
    parts = (
        f"weights {gib(memory.weights)}, gradients {gib(memory.gradients)}, optimizer "
        f"{gib(memory.optimizer)}, activations {gib(memory.activations)}"
    )
    # Fitting at the estimate is not enough: the verdict is the range's high end (§24.12).
    headline = f"Does not fit: {gib(memory.total)} per device ({parts})"
    if memory.total <= device:
        high = math.ceil(memory_range(inp, memory).high)
        headline = (
            f"Does not fit at the 80% range's high end: {gib(high)} per device "
            f"({gib(memory.total)} at the estimate: {parts})"
        )
    advice = [f"{headline} but the {gpu.name} has {gib(device)}."]
    act_levers = activation_levers(inp, memory)
    zero_fits = _next_zero_stage(inp, base, device, advice)
    singles_fit = _single_levers(inp, gpu, base, act_levers, advice)
    if inp.hardware.zero_stage == 0 and inp.hardware.count > 1:
        advice.append(
            "At ZeRO stage 0 more GPUs do not lower memory per device: each data-parallel "
            "replica holds all model states."
        )
    advice.extend(_more_gpus(inp, base, device, memory))
    if not (zero_fits or singles_fit):
        advice.append(combination_advice(inp, gpu, base, act_levers))
    return advice


def _verdict(inp: EstimateInput, memory: MemoryBreakdown, device: int) -> str:
    if fits_with_range(inp, memory, device):
        return "fits"
    if memory.total <= device:
        high = math.ceil(memory_range(inp, memory).high)
        return f"still too much at the 80% range's high end ({gib(high)})"
    return "still too much"


def activation_levers(inp: EstimateInput, memory: MemoryBreakdown) -> list[tuple[str, Change]]:
    """Each activation lever that applies: its label and how it changes the configuration."""
    training = inp.training
    if memory.activations <= 0:
        return []
    levers: list[tuple[str, Change]] = []
    if training.activation_bytes_per_sample is not None:
        # Activations given per sample: only the micro-batch changes them here.
        if training.micro_batch_size > 1:
            levers.append(("micro-batch size 1 with gradient accumulation", with_micro_batch_1))
        return levers
    if not training.flash_attention and not training.activation_checkpointing:
        levers.append(("FlashAttention (no s x s attention scores stored)", with_flash))
    if training.micro_batch_size > 1:
        levers.append(("micro-batch size 1 with gradient accumulation", with_micro_batch_1))
    if not training.activation_checkpointing:
        levers.append(("full activation recomputation (~33% more compute)", with_recompute))
    return levers


def _next_zero_stage(inp: EstimateInput, base: MemConfig, device: int, advice: list[str]) -> bool:
    """The first higher ZeRO stage that fits (else stage 3) on the same GPUs; whether it fits.
    On one GPU ZeRO partitions nothing: the offloads instead."""
    if inp.hardware.count == 1:
        return _offload_on_one_gpu(inp, base, device, advice)
    for stage in range(inp.hardware.zero_stage + 1, 4):
        m = job_memory(inp, replace(base, zero_stage=stage))
        fits = fits_with_range(inp, m, device)
        if fits or stage == 3:
            advice.append(
                f"With ZeRO stage {stage} on {inp.hardware.count} GPUs: {gib(m.total)} per "
                f"device, {_verdict(inp, m, device)}."
            )
            return fits
    return False


# DeepSpeed's offloads, lightest first (docs/domain.md §24.2).
_OFFLOADS = (
    (2, "optimizer", "ZeRO-Offload (optimizer states on the CPU, gradients streamed to it)"),
    (3, "optimizer_and_parameters", "ZeRO-Infinity (the parameters on the CPU too)"),
)


def _offload_on_one_gpu(
    inp: EstimateInput, base: MemConfig, device: int, advice: list[str]
) -> bool:
    """ZeRO-Offload, then ZeRO-Infinity, each with its computed bytes on the one GPU."""
    tried = False
    for stage, offload, label in _OFFLOADS:
        if base.offload == offload or (base.offload != "none" and offload == "optimizer"):
            continue
        m = job_memory(inp, replace(base, zero_stage=max(stage, base.zero_stage), offload=offload))
        fits = fits_with_range(inp, m, device)
        prefix = "" if tried else "On one GPU ZeRO partitions nothing; "
        advice.append(
            f"{prefix}with {label}: {gib(m.total)} per device, {_verdict(inp, m, device)}."
        )
        tried = True
        if fits:
            return True
    return False


def _single_levers(
    inp: EstimateInput,
    gpu: GpuModel,
    base: MemConfig,
    act_levers: Sequence[tuple[str, Change]],
    advice: list[str],
) -> bool:
    """Each lever alone (a lower precision from fp32, each activation lever); whether one fits."""
    singles: list[tuple[str, MemConfig]] = []
    if inp.training.precision in ("fp32", "tf32"):
        lower = lower_precision(gpu, inp.training.precision)
        if lower is not None:
            singles.append((f"{lower} mixed precision", replace(base, precision=lower)))
    singles.extend((label, change(base)) for label, change in act_levers)
    any_fits = False
    for label, cfg in singles:
        m = job_memory(inp, cfg)
        any_fits = any_fits or fits_with_range(inp, m, gpu.memory_bytes)
        verdict = _verdict(inp, m, gpu.memory_bytes)
        advice.append(f"With {label}: {gib(m.total)} per device, {verdict}.")
    return any_fits


def _more_gpus(
    inp: EstimateInput, base: MemConfig, device: int, memory: MemoryBreakdown
) -> list[str]:
    """The fewest GPUs that fit at some ZeRO stage >= 1, or why no count does."""
    best: tuple[int, int, MemoryBreakdown] | None = None
    for stage in range(max(inp.hardware.zero_stage, 1), 4):
        found = min_gpus_that_fit(inp, replace(base, zero_stage=stage), device)
        if found is not None and (best is None or found[0] < best[0]):
            best = (found[0], stage, found[1])
    if best is not None:
        n_gpus, stage, m = best
        return [f"With ZeRO stage {stage}, {n_gpus} GPUs would fit: {gib(m.total)} per device."]
    if memory.activations > 0:
        return [
            f"No GPU count fits as configured: activations alone take "
            f"{gib(memory.activations)} per device; shrink them first."
        ]
    return []


_Candidate = tuple[tuple[int, int, int], list[str], MemConfig]


def _staged(
    base: MemConfig, cfg: MemConfig, chosen: Sequence[tuple[str, Change]]
) -> list[_Candidate]:
    """One combination of activation levers at each ZeRO stage from the base's up."""
    out: list[_Candidate] = []
    for stage in range(base.zero_stage, 4):
        labels = [label for label, _ in chosen]
        if stage != base.zero_stage:
            labels.insert(0, f"ZeRO stage {stage}")
        staged = replace(cfg, zero_stage=stage)
        # Prefer fewer changes, then a lower ZeRO stage, then no recomputation.
        key = (len(labels), stage, int(staged.recompute and not base.recompute))
        out.append((key, labels, staged))
    return out


def _combinations(base: MemConfig, act_levers: Sequence[tuple[str, Change]]) -> list[_Candidate]:
    """Every combination of the levers and ZeRO stages, the preferred first."""
    candidates: list[_Candidate] = []
    for mask in range(1 << len(act_levers)):
        chosen = [act_levers[i] for i in range(len(act_levers)) if mask >> i & 1]
        names = {change for _, change in chosen}
        if with_flash in names and with_recompute in names:
            # Recomputation already drops the attention scores: FlashAttention adds nothing.
            continue
        cfg = base
        for _, change in chosen:
            cfg = change(cfg)
        candidates.extend(_staged(base, cfg, chosen))
    candidates.sort(key=lambda item: item[0])
    return candidates


def _smallest(
    base: MemConfig, act_levers: Sequence[tuple[str, Change]]
) -> tuple[MemConfig, list[str]]:
    """The smallest footprint tried: ZeRO-3 and every activation lever except FlashAttention
    when recomputation is among them."""
    smallest = replace(base, zero_stage=3)
    labels = [] if base.zero_stage == 3 else ["ZeRO stage 3"]
    has_recompute = any(change is with_recompute for _, change in act_levers)
    for label, change in act_levers:
        if change is with_flash and has_recompute:
            continue
        smallest = change(smallest)
        labels.append(label)
    return smallest, labels


def combination_advice(
    inp: EstimateInput,
    gpu: GpuModel,
    base: MemConfig,
    act_levers: Sequence[tuple[str, Change]],
) -> str:
    """The fewest combined changes that fit on the same GPUs, else the GPUs they need."""
    device = gpu.memory_bytes
    for _, labels, cfg in _combinations(base, act_levers):
        # Single changes are advised on their own; this advice is about combining them.
        if len(labels) < 2:
            continue
        m = job_memory(inp, cfg)
        if fits_with_range(inp, m, device):
            return (
                f"Combining {join_and(labels)} on {base.gpus} GPUs: {gib(m.total)} per device, "
                "fits."
            )
    smallest, labels = _smallest(base, act_levers)
    found = min_gpus_that_fit(inp, smallest, device)
    if found is not None and labels:
        return (
            f"Combining {join_and(labels)}, {found[0]} GPUs would fit: "
            f"{gib(found[1].total)} per device."
        )
    return (
        f"Nothing tried fits on the {gpu.name}; use tensor or pipeline parallelism, or a GPU "
        "with more memory."
    )


@dataclass(frozen=True)
class Findings:
    """What ``estimate`` computed, for the words that explain it."""

    gpu: GpuModel
    core: Core
    memory: MemoryBreakdown
    fits: bool
    activations_counted: bool
    mfu: float
    hfu: float
    pilot_utilization: float | None
    deepspeed: DeepSpeedMemory | None
    energy: Energy | None
    failures: Checkpointing | None
    levers: tuple[Lever, ...]
    time_range: Interval
    memory_range: Interval


def recommendations(inp: EstimateInput, found: Findings) -> list[str]:
    """The estimate's plain words: fit, utilization, what was assumed, and each lever."""
    # The fit first: a campaign's forecast quotes an item's first line when it does not fit.
    notes = _memory_notes(inp, found)
    notes += range_notes(
        found.time_range, found.memory_range, found.core.time.wall_hours, found.core.cost
    )
    notes += method_notes(inp)
    notes += sequence_notes(inp)
    notes += _utilization_notes(inp, found)
    notes += communication_notes(inp, found.core.communication)
    notes += _extra_notes(inp, found)
    notes.extend(lever_text(lever, found.core) for lever in found.levers)
    if inp.cost is not None:
        notes.append(
            "Hyper-parameter tuning multiplies the number of trainings: reserve budget beyond "
            "this run for experiments and failures."
        )
    return notes


def _memory_notes(inp: EstimateInput, found: Findings) -> list[str]:
    memory, device = found.memory, found.gpu.memory_bytes
    high = found.memory_range.high
    notes: list[str] = []
    if not found.fits:
        notes.extend(fit_advice(inp, found.gpu, memory))
    elif high > (1 - TIGHT_HEADROOM) * device:
        notes.append(
            f"Fits, but tightly: up to {gib(math.ceil(high))} of {gib(device)} per device "
            "(80%); allocator fragmentation beyond that is not counted."
        )
    if not found.activations_counted:
        notes.append(
            "Activation memory was not counted: give model.layers, model.hidden_size and "
            "model.attention_heads to include it."
        )
    return notes


def _utilization_notes(inp: EstimateInput, found: Findings) -> list[str]:
    training, hardware, gpu = inp.training, inp.hardware, found.gpu
    mfu, hfu = found.mfu, found.hfu
    if inp.pilot is None:
        notes = [
            f"No pilot: time assumes {100 * hardware.utilization:.0f}% of the {gpu.name}'s "
            f"{training.precision} peak ({hardware.utilization_kind.upper()}: "
            f"MFU {100 * mfu:.1f}%, HFU {100 * hfu:.1f}%); measure a short pilot before launching."
        ]
    else:
        notes = [
            f"The pilot runs at MFU {100 * mfu:.1f}% (model FLOPs, PaLM's accounting) and HFU "
            f"{100 * hfu:.1f}% (FLOPs executed, recomputation included) of the {gpu.name}'s "
            f"{training.precision} peak."
        ]
    if found.pilot_utilization is not None and found.pilot_utilization > 1:
        notes.append(
            f"The pilot implies {100 * found.pilot_utilization:.0f}% of peak FLOP/s, which is "
            "impossible: check the pilot throughput, its GPU count and model.parameters."
        )
    return notes


def _extra_notes(inp: EstimateInput, found: Findings) -> list[str]:
    notes: list[str] = []
    if inp.overheads is None:
        notes.append(
            "No overheads given: data loading, long inputs, validation, writing outputs and "
            "checkpoints were assumed to take zero hours; add them, extrapolating from a "
            "training step forgets them."
        )
    if found.deepspeed is not None:
        notes.append(
            f"DeepSpeed's own estimator (ZeRO-{inp.hardware.zero_stage}, offload "
            f"{inp.hardware.offload}) counts {gib(found.deepspeed.per_gpu_bytes)} of model "
            f"states per GPU and {gib(found.deepspeed.cpu_bytes)} of CPU memory per node, "
            "buffers included; the ZeRO paper's accounting above is the floor."
        )
    if found.energy is not None:
        energy = found.energy
        notes.append(
            f"Energy: {energy.gpu_kwh:,.0f} kWh at the GPUs, {energy.facility_kwh:,.0f} kWh with "
            f"the facility's PUE, about {energy.kg_co2e / 1000:,.1f} t CO2e on this grid."
        )
    if found.failures is not None:
        failures = found.failures
        notes.append(
            f"Checkpoint every {failures.daly_interval_minutes:,.0f} minutes (Daly; Young says "
            f"{failures.young_interval_minutes:,.0f}): failures and checkpoints are expected to "
            f"add {failures.expected_lost_hours:,.1f} h, {failures.wall_hours_with_failures:,.1f} "
            "h in all."
        )
    return notes
