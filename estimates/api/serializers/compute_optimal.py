"""POST /estimates/compute-optimal/: the request and the answer."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from rest_framework import serializers

from campaigns.api.fields import MoneyField, StrictCharField, StrictFloatField, StrictRegexField
from estimates.api.serializers.base import CURRENCY, MoneySerializer, StrictSerializer, ranged
from estimates.domain import formulas


class BudgetSerializer(StrictSerializer):
    amount = MoneyField(max_digits=16, decimal_places=2, min_value=Decimal("0.01"))
    currency = StrictRegexField(CURRENCY, default="USD")
    gpu = StrictCharField(max_length=60, help_text="A name or alias from the catalog.")
    precision = serializers.ChoiceField(choices=formulas.PRECISIONS, default="bf16")
    utilization = ranged("budget.utilization", default=0.4, help_text="Fraction of peak (MFU).")
    hourly_rate_per_gpu = MoneyField(
        max_digits=14, decimal_places=4, min_value=Decimal("0.0001"), help_text='e.g. "2.00"'
    )


class ComputeOptimalRequestSerializer(StrictSerializer):
    flops = ranged("compute_optimal.flops", required=False, help_text="Training compute C.")
    parameters = ranged("compute_optimal.parameters", required=False, help_text="Model size N.")
    budget = BudgetSerializer(required=False, help_text="Money, turned into FLOPs on a GPU.")
    scaling_law = serializers.ChoiceField(
        choices=formulas.SCALING_LAWS,
        default="chinchilla",
        help_text="chinchilla (Hoffmann et al. 2022, table 3) or llama3 (Dubey et al. 2024, "
        "section 3.2.1: tokens ~ C^0.53).",
    )
    epochs = ranged(
        "compute_optimal.epochs",
        default=1.0,
        help_text="Passes over the data (offers the half-epochs lever from 2).",
    )

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        given = [name for name in ("flops", "parameters", "budget") if name in attrs]
        if len(given) != 1:
            raise serializers.ValidationError(
                {"flops": ["Give exactly one of flops, parameters or budget."]}
            )
        return attrs


class ScalingLeverSerializer(serializers.Serializer[Any]):
    name = StrictCharField()
    description = StrictCharField()
    flops = StrictFloatField()
    cost_ratio = StrictFloatField()
    cost = MoneySerializer(allow_null=True)
    loss_ratio = StrictFloatField(allow_null=True)
    projection = StrictCharField()


class BudgetAnswerSerializer(serializers.Serializer[Any]):
    gpu = StrictCharField()
    precision = StrictCharField()
    gpu_hours = StrictFloatField()
    cost = MoneySerializer()


class ComputeOptimalSerializer(serializers.Serializer[Any]):
    parameters = StrictFloatField()
    tokens = StrictFloatField()
    flops = StrictFloatField()
    tokens_per_parameter = StrictFloatField()
    pf_days = StrictFloatField()
    scaling_law = StrictCharField(help_text='The law used: "chinchilla" or "llama3".')
    budget = BudgetAnswerSerializer(allow_null=True)
    levers = ScalingLeverSerializer(many=True)

    def get_fields(self) -> dict[str, serializers.Field[Any, Any, Any, Any]]:
        fields = super().get_fields()
        # "source" is a Field attribute, so it cannot be declared in the class body.
        fields["source"] = StrictCharField(help_text="The published fit and law used.")
        return fields
