"""The pieces every estimates serializer uses: the strict serializer (unknown fields are a 400),
the one field factory for range-checked numbers (``ranged``), and money as strings.

The request serializers check shape, types and documented ranges only; the domain rules
(positive counts, parallelism that divides the GPUs…) live in ``estimates.domain.formulas``,
whose ``EstimateInputError.field`` the view maps back onto the body's nesting.
"""

from __future__ import annotations

import copy
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


def _copy_field(field: Any) -> Any:
    """The copy of a declared field an instance binds. DRF deep-copies every declared field for
    every instance, which re-runs the field's __init__ (its validators rebuilt): ~60 µs a field
    here, 5 ms for the 81 fields of an estimate body, on every request. A leaf field is not
    changed between its __init__ and bind(), which sets the copy's own name and parent, so a
    shallow copy with its own validator list is the same field. A nested serializer, and a
    field with a child (ListField, DictField) the copy must bind to itself, are deep-copied as
    DRF does (a nested StrictSerializer's own fields are then copied here in turn)."""
    if isinstance(field, serializers.BaseSerializer) or hasattr(field, "child"):
        return copy.deepcopy(field)
    # copy.copy's own path (__reduce_ex__) costs three times this.
    clone = object.__new__(type(field))
    clone.__dict__.update(field.__dict__)
    if "_validators" in field.__dict__:
        clone._validators = list(field._validators)
    return clone


class StrictSerializer(serializers.Serializer[Any]):
    """Refuses fields it does not declare, each named in the 400 ("Unknown field."): a misspelt
    optional field would otherwise be ignored silently and its default used instead."""

    def get_fields(self) -> dict[str, Any]:
        return {name: _copy_field(field) for name, field in self._declared_fields.items()}

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
