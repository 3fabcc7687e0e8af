"""POST /estimates/hardware-options/ (and a campaign's options): the request, the ranked answer."""

from __future__ import annotations

import dataclasses
from decimal import Decimal
from typing import Any

from rest_framework import serializers

from campaigns.api.fields import (
    MoneyField,
    StrictBooleanField,
    StrictCharField,
    StrictFloatField,
    StrictIntegerField,
)
from estimates.api.serializers.base import MoneySerializer, money_json, ranged
from estimates.api.serializers.preview import (
    CostIntervalSerializer,
    EstimatePreviewSerializer,
    IntervalSerializer,
)
from estimates.api.serializers.training import PilotSpecSerializer
from estimates.domain import formulas
from estimates.domain import hardware_options as options


class OptionPilotSerializer(PilotSpecSerializer):
    gpu = StrictCharField(
        max_length=60,
        required=False,
        help_text="The GPU the pilot ran on (default: hardware.gpu).",
    )


class HardwareOptionsRequestSerializer(EstimatePreviewSerializer):
    pilot = OptionPilotSerializer(required=False, allow_null=True)
    rates = serializers.DictField(
        child=MoneyField(max_digits=14, decimal_places=4, min_value=Decimal("0")),
        required=False,
        help_text='GPU name -> price per GPU-hour, e.g. {"H100-SXM": "2.50"}.',
    )
    window_hours = ranged(
        "window_hours",
        optional=True,
        help_text="Calendar window the job must fit in (fits_window).",
    )


class PlanChoiceSerializer(serializers.Serializer[Any]):
    kind = StrictCharField(help_text='"hourly", "lots" or "none".')
    description = StrictCharField()
    rate_per_gpu_hour = StrictCharField(allow_null=True)
    lots = serializers.ListField(child=StrictCharField())


class OptionIntervalsSerializer(serializers.Serializer[Any]):
    wall_hours = IntervalSerializer()
    total_cost = CostIntervalSerializer(allow_null=True)


class HardwareOptionSerializer(serializers.Serializer[Any]):
    gpu = StrictCharField()
    count = StrictIntegerField()
    fits_in_memory = StrictBooleanField()
    wall_hours = StrictFloatField()
    gpu_hours = StrictFloatField()
    time_source = StrictCharField(help_text='"pilot", "projected" or "assumed".')
    assumption = StrictCharField()
    plan = PlanChoiceSerializer()
    total_cost = MoneySerializer(allow_null=True)
    fits_window = StrictBooleanField(
        allow_null=True,
        help_text="For a campaign: its whole calendar (setup, loading and every other stage "
        "included) with the remaining items on this GPU fits its window.",
    )
    calendar_hours = StrictFloatField(
        allow_null=True,
        required=False,
        help_text="For a campaign: its calendar with the remaining items on this GPU.",
    )
    other_machine_hours = StrictFloatField(
        required=False,
        help_text="The calendar's other machine stages still to come, rented with the option.",
    )
    intervals = OptionIntervalsSerializer(
        help_text="80% ranges of the hours and the cost by what the time rests on (§24.12)."
    )


class ExcludedSerializer(serializers.Serializer[Any]):
    gpu = StrictCharField()
    reason = StrictCharField()


class HardwareOptionsSerializer(serializers.Serializer[Any]):
    options = HardwareOptionSerializer(many=True, help_text="Ranked by ascending total cost.")
    excluded = ExcludedSerializer(many=True)


def option_json(option: options.HardwareOption) -> dict[str, Any]:
    plan = option.plan
    return {
        "gpu": option.gpu,
        "count": option.count,
        "fits_in_memory": option.fits_in_memory,
        "wall_hours": option.wall_hours,
        "gpu_hours": option.gpu_hours,
        "time_source": option.time_source,
        "assumption": option.assumption,
        "plan": {
            "kind": plan.kind,
            "description": plan.description,
            "rate_per_gpu_hour": None
            if plan.rate_per_gpu_hour is None
            else str(plan.rate_per_gpu_hour),
            "lots": list(plan.lots),
        },
        "total_cost": money_json(option.total_cost),
        "fits_window": option.fits_window,
        "calendar_hours": None
        if option.calendar_hours is None
        else round(option.calendar_hours, 2),
        "other_machine_hours": round(option.other_machine_hours, 2),
        "intervals": option_intervals_json(option),
    }


def option_intervals_json(option: options.HardwareOption) -> dict[str, Any]:
    """The hours' range by the option's kind; the cost scaled with it (a lot's price is fixed:
    its range is the price itself)."""
    hours = formulas.interval(option.wall_hours, option.range_kind)
    cost = option.total_cost
    cost_range = None
    if cost is not None:
        if option.plan.kind == "lots" or option.wall_hours <= 0:
            low = high = cost
        else:
            low, high = formulas.cost_range(cost, hours, option.wall_hours)
        cost_range = {"low": money_json(low), "high": money_json(high)}
    return {"wall_hours": dataclasses.asdict(hours), "total_cost": cost_range}


def options_json(
    ranked: list[options.HardwareOption], excluded: list[options.Excluded]
) -> dict[str, Any]:
    return {
        "options": [option_json(o) for o in ranked],
        "excluded": [{"gpu": e.gpu, "reason": e.reason} for e in excluded],
    }
