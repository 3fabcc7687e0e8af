"""The preview's optional ``cost``, ``energy`` and ``reliability`` objects."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from rest_framework import serializers

from campaigns.api.fields import MoneyField, StrictRegexField
from estimates.api.serializers.base import CURRENCY, StrictSerializer, ranged


class CostSpecSerializer(StrictSerializer):
    hourly_rate_per_gpu = MoneyField(
        max_digits=14, decimal_places=4, min_value=Decimal("0"), help_text='e.g. "1.50"'
    )
    currency = StrictRegexField(CURRENCY, default="USD")
    extra = MoneyField(
        max_digits=14,
        decimal_places=2,
        min_value=Decimal("0"),
        default=Decimal("0.00"),
        help_text="Stated extra costs (storage, network); nothing is invented.",
    )


class EnergySpecSerializer(StrictSerializer):
    pue = ranged("energy.pue", help_text="Facility power over IT power (e.g. 1.1).")
    grid_kg_co2_per_kwh = ranged("energy.grid_kg_co2_per_kwh")
    tdp_watts = ranged(
        "energy.tdp_watts", optional=True, help_text="Board power per GPU; default the catalog's."
    )


class InterruptionsSerializer(StrictSerializer):
    count = ranged("reliability.interruptions.count")
    days = ranged("reliability.interruptions.days")


class ReliabilitySpecSerializer(StrictSerializer):
    checkpoint_write_seconds = ranged("reliability.checkpoint_write_seconds")
    mtbf_hours = ranged(
        "reliability.mtbf_hours", optional=True, help_text="The job's mean time between failures."
    )
    interruptions = InterruptionsSerializer(
        required=False, allow_null=True, help_text="Interruptions observed: count over days."
    )

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        given = [name for name in ("mtbf_hours", "interruptions") if attrs.get(name) is not None]
        if len(given) != 1:
            raise serializers.ValidationError(
                {"mtbf_hours": ["Give exactly one of mtbf_hours or interruptions."]}
            )
        return attrs
