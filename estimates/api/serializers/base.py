"""The pieces every estimates serializer uses: the strict serializer (unknown fields are a 400),
the one field factory for range-checked numbers (``ranged``), and money as strings.

The request serializers check shape, types and documented ranges only; the domain rules
(positive counts, parallelism that divides the GPUs…) live in ``estimates.domain.formulas``,
whose ``EstimateInputError.field`` the view maps back onto the body's nesting.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.extensions import OpenApiSerializerExtension
from rest_framework import serializers

from campaigns.api.fields import StrictCharField, StrictFloatField, StrictIntegerField
from estimates.domain import formulas

CURRENCY = r"^[A-Z]{3}$"


def ranged(dotted: str, *, optional: bool = False, **kwargs: Any) -> Any:
    """The one field of a range-checked numeric input: bounded by its documented range
    (``formulas.LIMITS[dotted]``), so the schema states it as minimum/maximum and a value outside
    it is a 400 naming the field. Integer where both bounds are ints (a count), else a float;
    ``optional`` is "may be absent or null" (the formulas then use their default)."""
    low, high = formulas.LIMITS[dotted]
    if optional:
        kwargs = {"required": False, "allow_null": True, **kwargs}
    if isinstance(low, int) and isinstance(high, int):
        return StrictIntegerField(min_value=low, max_value=high, **kwargs)
    return StrictFloatField(min_value=float(low), max_value=float(high), **kwargs)


class StrictSerializer(serializers.Serializer[Any]):
    """Refuses fields it does not declare, each named in the 400 ("Unknown field."): a misspelt
    optional field would otherwise be ignored silently and its default used instead."""

    def to_internal_value(self, data: Any) -> Any:
        if isinstance(data, dict):
            unknown = sorted(set(data) - set(self.fields))
            if unknown:
                raise serializers.ValidationError({name: ["Unknown field."] for name in unknown})
        return super().to_internal_value(data)


class StrictSerializerSchema(OpenApiSerializerExtension):  # type: ignore[no-untyped-call]
    """The schema says what StrictSerializer does: no property beyond those listed."""

    target_class = StrictSerializer
    match_subclasses = True

    def map_serializer(self, auto_schema: Any, direction: str) -> Any:
        schema = auto_schema._map_basic_serializer(self.target, direction)
        if direction == "request":
            schema["additionalProperties"] = False
        return schema


class MoneySerializer(serializers.Serializer[Any]):
    amount = StrictCharField(help_text='Decimal string, e.g. "47.14".')
    currency = StrictCharField()


def money_json(money: formulas.Money | None) -> dict[str, str] | None:
    if money is None:
        return None
    return {"amount": str(money.amount), "currency": money.currency}
