"""POST /estimates/compute-optimal/: the compute-optimal split by a published scaling law, from
FLOPs, parameters or a money budget, with the Kaplan levers (docs/domain.md §10): parsed here,
computed by `estimates.selectors.scaling.compute_optimal_answer`, answered here."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from estimates.api.calculator import SignedInPerson, calculator_schema, field_error
from estimates.api.serializers import ComputeOptimalRequestSerializer, ComputeOptimalSerializer
from estimates.domain import formulas
from estimates.domain.formulas.scaling import SCALING_LAW_SOURCES
from estimates.selectors.scaling import ComputeOptimalAnswer, compute_optimal_answer


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
        try:
            answer = compute_optimal_answer(body.validated_data)
        except formulas.EstimateInputError as error:
            raise field_error(error) from None
        return Response(_answer_json(answer))


def _answer_json(answer: ComputeOptimalAnswer) -> dict[str, Any]:
    split, budget = answer.split, answer.budget
    total = 6.0 * split.parameters * split.tokens
    return {
        "parameters": split.parameters,
        "tokens": split.tokens,
        "flops": total,
        "tokens_per_parameter": split.tokens / split.parameters,
        "pf_days": total / 8.64e19,
        "budget": None
        if budget is None
        else {
            "gpu": budget.gpu,
            "precision": budget.precision,
            "gpu_hours": budget.gpu_hours,
            "cost": _money(budget.amount, budget.currency),
        },
        "scaling_law": answer.law,
        "source": (
            f"{SCALING_LAW_SOURCES[answer.law]}; levers: Kaplan et al. (2020), L ~ N^-0.076, "
            "D^-0.095 (projections)"
        ),
        "levers": [
            _lever_json(
                lever, None if cost is None or budget is None else _money(cost, budget.currency)
            )
            for lever, cost in answer.levers
        ],
    }


def _money(amount: Decimal, currency: str) -> dict[str, str]:
    return {"amount": str(amount), "currency": currency}


def _lever_json(lever: formulas.ScalingLever, cost: dict[str, str] | None) -> dict[str, Any]:
    return {
        "name": lever.name,
        "description": lever.description,
        "flops": lever.flops,
        "cost_ratio": lever.cost_ratio,
        "cost": cost,
        "loss_ratio": lever.loss_ratio,
        "projection": lever.projection,
    }
