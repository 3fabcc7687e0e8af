"""The compute-optimal split the calculator answers (POST /estimates/compute-optimal/,
docs/domain.md §10): from FLOPs, parameters or a money budget on a catalog GPU (read here), by a
published scaling law, with the Kaplan levers and, for a budget, what each lever costs."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from catalog.domain import catalog
from estimates.domain import formulas
from estimates.domain.formulas.precision import precision_speedup
from estimates.domain.formulas.scaling import budget_flops, compute_optimal
from estimates.selectors.gpus import catalog_gpu


@dataclass(frozen=True)
class Budget:
    gpu: str
    precision: str
    gpu_hours: float
    amount: Decimal
    currency: str


@dataclass(frozen=True)
class ComputeOptimalAnswer:
    split: formulas.ComputeOptimal
    law: str
    budget: Budget | None
    # Each lever with what it costs when a budget was given (None without one).
    levers: tuple[tuple[formulas.ScalingLever, Decimal | None], ...]


def compute_optimal_answer(data: dict[str, Any]) -> ComputeOptimalAnswer:
    """The split and levers for validated request ``data``; a refused input raises
    ``formulas.EstimateInputError`` naming its field."""
    budget = data.get("budget")
    flops, gpu, spent = data.get("flops"), None, None
    if budget is not None:
        gpu = _budget_gpu(budget)
        gpu_hours, flops = budget_flops(
            budget["amount"],
            budget["hourly_rate_per_gpu"],
            gpu.peak_flops[budget["precision"]],
            budget["utilization"],
        )
        spent = Budget(
            gpu.name, budget["precision"], gpu_hours, budget["amount"], budget["currency"]
        )
    law = data["scaling_law"]
    split = compute_optimal(law, flops=flops, parameters=data.get("parameters"))
    levers = _levers(data, split, gpu)
    return ComputeOptimalAnswer(
        split,
        law,
        spent,
        tuple(
            (
                lever,
                None if spent is None else formulas.scaled_amount(spent.amount, lever.cost_ratio),
            )
            for lever in levers
        ),
    )


def _levers(
    data: dict[str, Any], split: formulas.ComputeOptimal, gpu: catalog.GpuModel | None
) -> tuple[formulas.ScalingLever, ...]:
    budget = data.get("budget")
    lower = (
        None
        if gpu is None or budget is None
        else formulas.lower_precision(gpu, budget["precision"])
    )
    speedup, basis = None, ""
    if gpu is not None and lower is not None and budget is not None:
        # The measured speed-up at the anchor's shape: the split knows no shape (§24.7).
        speedup, basis = precision_speedup(gpu, budget["precision"], lower)
    return formulas.scaling_levers(
        split.parameters,
        split.tokens,
        epochs=data["epochs"],
        precision_speedup=speedup,
        lower_precision=lower,
        speedup_basis=basis,
    )


def _budget_gpu(budget: dict[str, Any]) -> catalog.GpuModel:
    spec = catalog_gpu(budget["gpu"], "budget.gpu")
    if not spec.supports(budget["precision"]):
        raise formulas.EstimateInputError(
            "budget.precision",
            f"the {spec.name} has no {budget['precision']} figure; it offers "
            f"{', '.join(spec.peak_flops)}",
        )
    return spec
