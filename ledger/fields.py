"""Serializer fields for money and hours.

Money is exact: a JSON number has already been through binary floating point in the client (and
in the parser), so `47.14` may arrive as 47.140000000000001. Amounts are therefore accepted as
decimal strings only, and the error names the field like any other DRF field error.
"""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from rest_framework import serializers


class MoneyField(serializers.DecimalField):
    """A decimal amount sent as a JSON string ("47.14"); numbers of any kind are refused."""

    default_error_messages = {
        "not_a_string": (
            'Send the amount as a decimal string, e.g. "47.14", not a JSON {type}: '
            "money is exact and a float is not."
        ),
    }

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("max_digits", 14)
        kwargs.setdefault("decimal_places", 2)
        super().__init__(**kwargs)

    def to_internal_value(self, data: Any) -> Decimal:
        if not isinstance(data, str):
            kind = "boolean" if isinstance(data, bool) else type(data).__name__
            kind = {"float": "number", "int": "number"}.get(kind, kind)
            self.fail("not_a_string", type=kind)
        return super().to_internal_value(data)


class HoursField(serializers.DecimalField):
    """Hours as a number or a string, rounded to the hundredth the models keep.

    Unlike money, hours are measurements: 10.333 h is rounded, not refused.
    """

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("max_digits", 9)
        kwargs.setdefault("decimal_places", 2)
        kwargs.setdefault("min_value", Decimal("0"))
        kwargs.setdefault("rounding", ROUND_HALF_UP)
        super().__init__(**kwargs)

    def to_internal_value(self, data: Any) -> Decimal:
        if isinstance(data, bool):
            self.fail("invalid")
        return super().to_internal_value(data)

    def validate_precision(self, value: Decimal) -> Decimal:
        # Round first, then let DRF check the digits that remain.
        return super().validate_precision(value.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP))
