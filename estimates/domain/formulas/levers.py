"""Cost levers (docs/domain.md §10): the same run with half the model, half the data, a lower
precision or fewer epochs, recomputed, with Kaplan's loss projection where it has one.

Units: FLOPs, hours, ``Decimal`` money; loss ratios are dimensionless.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from catalog.domain.catalog import GpuModel
from estimates.domain.formulas.core import Core, time_and_cost
from estimates.domain.formulas.cost import Money
from estimates.domain.formulas.precision import precision_speedup
from estimates.domain.formulas.scaling import (
    KAPLAN_ALPHA_DATA,
    KAPLAN_ALPHA_PARAMETERS,
    kaplan_loss_ratio,
)
from estimates.domain.formulas.specs import EstimateInput, PilotSpec, tokens_per_epoch
from estimates.domain.formulas.wording import count_text, money_text


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


def lower_precision(gpu: GpuModel, precision: str) -> str | None:
    """The next lower precision the card has a peak for (fp32/tf32 -> bf16/fp16 -> fp8)."""
    candidates = {"fp32": ("bf16", "fp16"), "tf32": ("bf16", "fp16"), "bf16": ("fp8",)}
    candidates["fp16"] = ("fp8",)
    for option in candidates.get(precision, ()):
        if gpu.supports(option):
            return option
    return None


def at_lower_precision(
    inp: EstimateInput, gpu: GpuModel, lower: str
) -> tuple[EstimateInput, float, str]:
    """The run at ``lower`` precision going ``speedup`` times faster, whether its time comes from a
    pilot (its throughput x speedup) or from the peak (the utilization scaled so that
    peak(lower) x utilization' = peak(precision) x utilization x speedup)."""
    training, hardware = inp.training, inp.hardware
    speedup, basis = precision_speedup(gpu, training.precision, lower, inp)
    peak_ratio = gpu.peak_flops[lower] / gpu.peak_flops[training.precision]
    changed = replace(
        inp,
        training=replace(training, precision=lower),
        hardware=replace(hardware, utilization=hardware.utilization * speedup / peak_ratio),
        pilot=scaled_pilot(inp.pilot, speedup),
    )
    return changed, speedup, basis


def fp4_lever_applies(gpu: GpuModel, precision: str) -> bool:
    """The FP4 lever: a 16-bit run on a card with a 4-bit tensor-core format (§24.7)."""
    return precision in ("bf16", "fp16") and gpu.supports("fp4")


def scaled_pilot(pilot: PilotSpec | None, speedup: float) -> PilotSpec | None:
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


def cost_levers(inp: EstimateInput, gpu: GpuModel) -> tuple[Lever, ...]:
    model, training = inp.model, inp.training
    options: list[tuple[str, str, EstimateInput, float | None]] = []
    active = model.active_parameters
    half_model = replace(
        model,
        parameters=model.parameters / 2,
        active_parameters=None if active is None else active / 2,
    )
    if training.flops_per_sample is None:
        # A model given by FLOPs per sample: its FLOPs do not follow its parameter count.
        options.append(
            (
                "half_model",
                f"half the model ({count_text(half_model.parameters)} parameters)",
                replace(inp, model=half_model, pilot=scaled_pilot(inp.pilot, 2.0)),
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
            f"half the data ({count_text(tokens_per_epoch(half_data) * training.epochs)} tokens)",
            replace(inp, training=half_data),
            kaplan_loss_ratio(0.5, KAPLAN_ALPHA_DATA),
        )
    )
    options.extend(_precision_options(inp, gpu))
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
        core = time_and_cost(changed, gpu)
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


def _precision_options(
    inp: EstimateInput, gpu: GpuModel
) -> list[tuple[str, str, EstimateInput, float | None]]:
    """The next lower precision (fp8 from 16 bits) and, on a card with one, FP4, each at its
    measured speed-up (docs/domain.md §24.7)."""
    precision = inp.training.precision
    targets = [("lower_precision", lower_precision(gpu, precision))]
    if fp4_lever_applies(gpu, precision):
        targets.append(("fp4_precision", "fp4"))
    options: list[tuple[str, str, EstimateInput, float | None]] = []
    for name, lower in targets:
        if lower is None:
            continue
        changed, speedup, basis = at_lower_precision(inp, gpu, lower)
        description = f"{lower} instead of {precision} ({basis}, x{speedup:.3g})"
        options.append((name, description, changed, None))
    return options


def lever_text(lever: Lever, core: Core) -> str:
    if lever.cost is not None and core.cost is not None:
        price = f"{money_text(lever.cost)} instead of {money_text(core.cost)}"
    else:
        price = f"{lever.gpu_hours:,.0f} GPU-hours instead of {core.time.gpu_hours:,.0f}"
    text = f"Cost lever, {lever.description}: {price}"
    if lever.loss_ratio is not None:
        text += (
            f"; Kaplan's scaling law expects a loss about {100 * (lever.loss_ratio - 1):.1f}% "
            "higher"
        )
    return text + "; let the validation metric judge the trade."
