"""POST /estimates/compute-optimal/: the compute-optimal split by a published scaling law, from
FLOPs, parameters or a money budget, with the Kaplan levers (docs/domain.md §10)."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from catalog.domain import catalog
from estimates.api.calculator import (
    SignedInPerson,
    calculator_schema,
    catalog_gpu,
    field_error,
    nested_error,
)
from estimates.api.serializers import ComputeOptimalRequestSerializer, ComputeOptimalSerializer
from estimates.domain import formulas
from estimates.domain.formulas.precision import precision_speedup
from estimates.domain.formulas.scaling import SCALING_LAW_SOURCES, compute_optimal


class ComputeOptimalView(APIView):
    """The compute-optimal split by Chinchilla's or Llama 3's law from FLOPs, parameters or a
    money budget, with the Kaplan levers (formulas.compute_optimal, formulas.scaling_levers;
    docs/api.md)."""

    permission_classes = [SignedInPerson]

    @calculator_schema(
        ComputeOptimalRequestSerializer,
        ComputeOptimalSerializer,
        "Compute-optimal parameters and tokens (Chinchilla or Llama 3), and scaling levers",
    )
    def post(self, request: Request) -> Response:
        body = ComputeOptimalRequestSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        budget = data.get("budget")
        try:
            flops, budget_json, gpu = _budget_flops(data)
            law = data["scaling_law"]
            split = compute_optimal(law, flops=flops, parameters=data.get("parameters"))
            levers = _levers(data, split, gpu)
        except formulas.EstimateInputError as error:
            raise field_error(error) from None
        total = 6.0 * split.parameters * split.tokens
        return Response(
            {
                "parameters": split.parameters,
                "tokens": split.tokens,
                "flops": total,
                "tokens_per_parameter": split.tokens / split.parameters,
                "pf_days": total / 8.64e19,
                "budget": budget_json,
                "scaling_law": law,
                "source": (
                    f"{SCALING_LAW_SOURCES[law]}; levers: Kaplan et al. (2020), L ~ N^-0.076, "
                    "D^-0.095 (projections)"
                ),
                "levers": [_lever_json(lever, budget) for lever in levers],
            }
        )


def _budget_flops(
    data: dict[str, Any],
) -> tuple[float | None, dict[str, Any] | None, catalog.GpuModel | None]:
    """The FLOPs given, or those a money budget buys on its GPU at its utilization."""
    budget = data.get("budget")
    if budget is None:
        return data.get("flops"), None, None
    gpu = _budget_gpu(budget)
    gpu_hours = float(budget["amount"] / budget["hourly_rate_per_gpu"])
    flops = gpu_hours * 3600.0 * gpu.peak_flops[budget["precision"]] * budget["utilization"]
    if flops > 1e32:
        raise formulas.EstimateInputError(
            "budget.amount", f"buys {flops:.3g} FLOPs, beyond the 1e32 handled"
        )
    answer = {
        "gpu": gpu.name,
        "precision": budget["precision"],
        "gpu_hours": gpu_hours,
        "cost": {"amount": str(budget["amount"]), "currency": budget["currency"]},
    }
    return flops, answer, gpu


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


def _lever_json(lever: formulas.ScalingLever, budget: dict[str, Any] | None) -> dict[str, Any]:
    cost = None
    if budget is not None:
        amount = formulas.scaled_amount(budget["amount"], lever.cost_ratio)
        cost = {"amount": str(amount), "currency": budget["currency"]}
    return {
        "name": lever.name,
        "description": lever.description,
        "flops": lever.flops,
        "cost_ratio": lever.cost_ratio,
        "cost": cost,
        "loss_ratio": lever.loss_ratio,
        "projection": lever.projection,
    }


def _budget_gpu(budget: dict[str, Any]) -> catalog.GpuModel:
    spec = catalog_gpu(budget["gpu"], "budget.gpu")
    if not spec.supports(budget["precision"]):
        raise serializers.ValidationError(
            nested_error(
                "budget.precision",
                f"the {spec.name} has no {budget['precision']} figure; it offers "
                f"{', '.join(spec.peak_flops)}",
            )
        )
    return spec
