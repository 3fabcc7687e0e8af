"""The API's one hours field, one money field and one identifier field, and the strict fields
(each takes its JSON type only), shared by every app
(limits: README, "Limits"; contract: docs/api.md).

Hours are measurements: a client computes them (`elapsed / 3600` is 0.7777777777777778), so any
finite non-negative number is taken and rounded half-up to the hundredth the models keep; only
what is not such a number, or is above HOURS_MAX, is refused. Money is exact: a JSON number has
already been through binary floating point (47.14 may arrive as 47.140000000000001), so amounts
are decimal strings only, and an amount with more places than the field keeps is refused, not
rounded.

Both fields check magnitude before any `quantize`: Decimal's default context has 28 digits, and
quantizing 1e30 to cents raises InvalidOperation (a 500) instead of a field error. Each field's
OpenAPI schema states exactly what it accepts, so that a schema-driven test can hold the server to
it in both directions (what the schema allows is accepted, what it forbids is refused).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from decimal import ROUND_HALF_UP, Decimal, DecimalException
from typing import Any, TypeVar

from django.db import models
from drf_spectacular.extensions import OpenApiSerializerFieldExtension
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers
from rest_framework.relations import MANY_RELATION_KWARGS

from campaigns.domain import stop_rules
from campaigns.domain.identifiers import IDENTIFIER_PATTERN, identifier_problem

#: The largest number of hours any input takes (11 years of one GPU, far past any campaign);
#: it fits the models' DecimalField(max_digits=9, decimal_places=2).
HOURS_MAX = Decimal("100000")
HOURS_PLACES = Decimal("0.01")
#: A decimal string of hours: plain notation (no exponent, no sign, no spaces), at most
#: HOURS_MAX, any number of places (they are rounded).
HOURS_STRING = r"^0*(?:[0-9]{1,5}(?:\.[0-9]+)?|100000(?:\.0+)?)$"
HOURS_STRING_MAX_LENGTH = 64
HOURS_HELP = (
    "Hours, a JSON number or a decimal string; rounded half-up to 0.01 h; "
    f"from 0 to {HOURS_MAX:,} h."
)


class HoursField(serializers.DecimalField):
    """Hours from 0 to HOURS_MAX (one limit for every hours input: the schema's string
    pattern states it too), as a number or a decimal string, rounded half-up to 0.01 h.
    Represented as a decimal string ("12.50")."""

    default_error_messages = {
        "invalid": 'Send hours as a finite number, e.g. 12.5, or a decimal string, e.g. "12.5".',
    }

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("max_digits", 9)
        kwargs.setdefault("decimal_places", 2)
        kwargs.setdefault("min_value", Decimal("0"))
        kwargs["max_value"] = HOURS_MAX
        kwargs.setdefault("rounding", ROUND_HALF_UP)
        kwargs.setdefault("help_text", HOURS_HELP)
        super().__init__(**kwargs)

    def validate_empty_values(self, data: Any) -> tuple[bool, Any]:
        # DRF's DecimalField reads "" as null; here "" is not a number of hours (400).
        return serializers.Field.validate_empty_values(self, data)

    def to_internal_value(self, data: Any) -> Decimal:
        if isinstance(data, bool):
            self.fail("invalid")
        if isinstance(data, str):
            if re.fullmatch(r"-\d{1,12}(\.\d{1,12})?", data):
                # A negative decimal string is a number, just below the limit: say which limit.
                self.fail("min_value", min_value=self.min_value)
            if len(data) > HOURS_STRING_MAX_LENGTH or not re.fullmatch(HOURS_STRING, data):
                self.fail("invalid")
            text = data
        elif isinstance(data, int | float | Decimal):
            text = str(data)  # a float's shortest repr: 0.7777777777777778, 1e+27
        else:
            self.fail("invalid")
        try:
            value = Decimal(text)
        except DecimalException:
            self.fail("invalid")
        if not value.is_finite():
            self.fail("invalid")
        # Bounds before rounding: quantizing a huge value overflows the Decimal context.
        if value < 0:
            self.fail("min_value", min_value=self.min_value)
        if self.max_value is not None and value > self.max_value:
            self.fail("max_value", max_value=self.max_value)
        rounded = value.quantize(HOURS_PLACES, rounding=ROUND_HALF_UP)
        return rounded.copy_abs()  # -0 is 0.00


class MoneyField(serializers.DecimalField):
    """An amount as a decimal string ("47.14"), never a JSON number; refused (not rounded) when
    it has more places or digits than the field keeps. Defaults: 14 digits, 2 places."""

    default_error_messages = {
        "not_a_string": (
            'Send the amount as a decimal string, e.g. "47.14", not a JSON {type}: '
            "money is exact and a float is not."
        ),
        "invalid": 'Send the amount as a plain decimal string, e.g. "47.14".',
        "negative_zero": 'A negative zero is no amount: send "0".',
    }

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("max_digits", 14)
        kwargs.setdefault("decimal_places", 2)
        super().__init__(**kwargs)

    def validate_empty_values(self, data: Any) -> tuple[bool, Any]:
        # DRF's DecimalField reads "" as null; an amount is a decimal string or null, not "".
        return serializers.Field.validate_empty_values(self, data)

    @property
    def pattern(self) -> str:
        """The strings taken: plain notation, no more whole digits or places than are kept."""
        places = self.decimal_places or 0
        whole = (self.max_digits or 28) - places
        # A sign only where negatives are allowed, and never on a zero ("-0", "-0.00").
        sign = "" if self.min_value is not None and self.min_value >= 0 else r"(?!-0*(?:\.0*)?$)-?"
        fraction = rf"(?:\.[0-9]{{1,{places}}})?" if places else ""
        return rf"^{sign}[0-9]{{1,{whole}}}{fraction}$"

    def to_internal_value(self, data: Any) -> Decimal:
        if isinstance(data, Decimal):  # from Python callers; JSON cannot carry one
            data = str(data)
        if not isinstance(data, str):
            kind = "boolean" if isinstance(data, bool) else type(data).__name__
            kind = {"float": "number", "int": "number"}.get(kind, kind)
            self.fail("not_a_string", type=kind)
        if not re.fullmatch(self.pattern, data):
            # Say which limit was passed when the number itself is readable.
            try:
                value = Decimal(data)
            except DecimalException:
                self.fail("invalid")
            if value.is_zero() and value.is_signed():
                self.fail("negative_zero")
            if value.is_finite():
                self.validate_precision(value)  # raises: too many digits or places
            self.fail("invalid")
        value = Decimal(data)
        # The pattern bounds the digits, so the quantize below cannot overflow.
        return self.quantize(self.validate_precision(value))


class HoursFieldSchema(OpenApiSerializerFieldExtension):  # type: ignore[no-untyped-call]
    """Requests: a number with minimum and maximum, or a decimal string; answers: a string."""

    target_class = HoursField

    def map_serializer_field(self, auto_schema: Any, direction: str) -> Any:
        if direction != "request":
            return auto_schema._map_serializer_field(self.target, direction, True)
        field: HoursField = self.target
        number: dict[str, Any] = {"type": "number", "minimum": 0}
        if field.max_value is not None:
            number["maximum"] = field.max_value
        return {
            "oneOf": [
                number,
                {
                    "type": "string",
                    "pattern": HOURS_STRING,
                    "maxLength": HOURS_STRING_MAX_LENGTH,
                },
            ]
        }


class MoneyFieldSchema(OpenApiSerializerFieldExtension):  # type: ignore[no-untyped-call]
    """A decimal string whose pattern is exactly the one the field enforces."""

    target_class = MoneyField

    def map_serializer_field(self, auto_schema: Any, direction: str) -> Any:
        field: MoneyField = self.target
        return {"type": "string", "format": "decimal", "pattern": field.pattern}


# --- Strict JSON types ----------------------------------------------------------------------
#
# DRF's fields coerce: CharField takes 0 as "0", BooleanField takes 0, 1, "yes" and "off",
# IntegerField and FloatField take "12", a related field takes "3" as the id 3, and a many=True
# related field takes {} as an empty list. The schema says string, boolean, integer, number,
# array; these fields refuse any other JSON type with DRF's own message for the field, so that
# what the schema forbids is refused (a 400 naming the field) and a client's type slip (a
# number for a name, "false" for false, which Python reads as true) is not stored quietly.


class StrictCharField(serializers.CharField):
    """A JSON string only (not a number or boolean turned into one)."""

    def to_internal_value(self, data: Any) -> str:
        if not isinstance(data, str):
            self.fail("invalid")
        return super().to_internal_value(data)


class StrictRegexField(serializers.RegexField):
    """A JSON string only, matching the pattern."""

    def to_internal_value(self, data: Any) -> str:
        if not isinstance(data, str):
            self.fail("invalid")
        return super().to_internal_value(data)


class StrictBooleanField(serializers.BooleanField):
    """true or false only (not 0, 1, "true", "yes")."""

    def to_internal_value(self, data: Any) -> bool:
        if not isinstance(data, bool):
            self.fail("invalid", input=data)
        return data


class StrictIntegerField(serializers.IntegerField):
    """A JSON integer only (not a string of digits, not a boolean); 3.0 is 3, as in JSON Schema."""

    def to_internal_value(self, data: Any) -> int:
        if isinstance(data, bool) or not (
            isinstance(data, int) or (isinstance(data, float) and data.is_integer())
        ):
            self.fail("invalid")
        return super().to_internal_value(data)


class StrictFloatField(serializers.FloatField):
    """A JSON number only (not a numeric string, not a boolean)."""

    def to_internal_value(self, data: Any) -> float:
        if isinstance(data, bool) or not isinstance(data, int | float):
            self.fail("invalid")
        return super().to_internal_value(data)


class StrictManyRelatedField(serializers.ManyRelatedField):
    """A JSON array of ids only (DRF iterates any iterable: {} would read as [])."""

    def to_internal_value(self, data: Any) -> Sequence[Any]:
        if not isinstance(data, list):
            self.fail("not_a_list", input_type=type(data).__name__)
        return super().to_internal_value(data)


_M = TypeVar("_M", bound=models.Model)


class StrictPrimaryKeyRelatedField(serializers.PrimaryKeyRelatedField[_M]):
    """An integer id only (not "3"); many=True takes a JSON array only."""

    def to_internal_value(self, data: Any) -> _M:
        if isinstance(data, bool) or not isinstance(data, int):
            self.fail("incorrect_type", data_type=type(data).__name__)
        return super().to_internal_value(data)

    @classmethod
    def many_init(cls, *args: Any, **kwargs: Any) -> StrictManyRelatedField:
        # DRF's RelatedField.many_init, building the strict list field.
        list_kwargs = {key: kwargs[key] for key in kwargs if key in MANY_RELATION_KWARGS}
        return StrictManyRelatedField(child_relation=cls(*args, **kwargs), **list_kwargs)


# A ModelSerializer whose fields built from the model take their JSON type only. (A comment, not
# a docstring: drf-spectacular would give it as the description of every serializer using it.)
class StrictModelSerializer(serializers.ModelSerializer[_M]):
    serializer_field_mapping = {
        **serializers.ModelSerializer.serializer_field_mapping,
        models.CharField: StrictCharField,
        models.TextField: StrictCharField,
        models.SlugField: StrictCharField,
        models.BooleanField: StrictBooleanField,
        models.IntegerField: StrictIntegerField,
        models.BigIntegerField: StrictIntegerField,
        models.SmallIntegerField: StrictIntegerField,
        models.PositiveIntegerField: StrictIntegerField,
        models.PositiveSmallIntegerField: StrictIntegerField,
        models.PositiveBigIntegerField: StrictIntegerField,
        models.FloatField: StrictFloatField,
    }
    serializer_related_field = StrictPrimaryKeyRelatedField


class IdentifierField(StrictCharField):
    """A name the client chooses and later refers to (a corpus revision, a GPU lot, a metric):
    taken exactly as sent, refused (not trimmed) with surrounding whitespace or control
    characters. The schema states it with a pattern: no surrounding whitespace."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs["trim_whitespace"] = False
        super().__init__(**kwargs)

    def to_internal_value(self, data: Any) -> str:
        value: str = super().to_internal_value(data)
        problem = identifier_problem(value)
        if problem:
            raise serializers.ValidationError(problem)
        return value


class IdentifierFieldSchema(OpenApiSerializerFieldExtension):  # type: ignore[no-untyped-call]
    target_class = IdentifierField

    def map_serializer_field(self, auto_schema: Any, direction: str) -> Any:
        schema = auto_schema._map_serializer_field(self.target, direction, True)
        if direction == "request":
            schema["pattern"] = IDENTIFIER_PATTERN
        return schema


# --- Numbers, JSON objects and metric values ----------------------------------------------


class FiniteFloatField(StrictFloatField):
    """A float that is a real measurement: no bool, no NaN/Infinity, no overflow."""

    default_error_messages = {"not_finite": "A finite number is required."}

    def to_internal_value(self, data: Any) -> float:
        try:
            value = super().to_internal_value(data)
        except OverflowError:
            self.fail("not_finite")
        if not math.isfinite(value):
            self.fail("not_finite")
        return float(value)


JSON_MAX_DEPTH = 32
JSON_MAX_BYTES = 65536


def json_problem(value: Any) -> str | None:
    """Why PostgreSQL's jsonb (or a sane reader) could not take this value; None if it can.

    Iterative, so that a hostile nesting depth is refused rather than exhausting the stack.
    """
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if depth > JSON_MAX_DEPTH:
            return "too_deep"
        if isinstance(item, str):
            if "\x00" in item:
                return "nul"
        elif isinstance(item, dict):
            for key, child in item.items():
                if "\x00" in key:
                    return "nul"
                stack.append((child, depth + 1))
        elif isinstance(item, list):
            stack.extend((child, depth + 1) for child in item)
        elif isinstance(item, float) and not math.isfinite(item):
            return "not_finite"
    if len(json.dumps(value)) > JSON_MAX_BYTES:
        return "too_large"
    return None


@extend_schema_field({"type": "object", "additionalProperties": True})
class JSONObjectField(serializers.JSONField):
    """A JSON object (a run or item configuration) that PostgreSQL's jsonb can store."""

    default_error_messages = {
        "not_an_object": "Expected a JSON object.",
        "nul": "Text may not contain the NUL character (\\u0000).",
        "too_deep": f"At most {JSON_MAX_DEPTH} levels of nesting.",
        "not_finite": "NaN and Infinity are not JSON values.",
        "too_large": f"At most {JSON_MAX_BYTES // 1024} KiB of JSON.",
    }

    def to_internal_value(self, data: Any) -> Any:
        if not isinstance(data, dict):
            self.fail("not_an_object")
        problem = json_problem(data)
        if problem is not None:
            self.fail(problem)
        return super().to_internal_value(data)


@extend_schema_field(
    {
        "oneOf": [
            {"type": "number"},
            {"type": "string", "enum": ["NaN", "Infinity", "-Infinity"]},
        ]
    }
)
class MetricValueField(serializers.Field[float, Any, Any, Any]):
    """For the schema only: a number, or one of the non-finite tokens (bare or as a string)."""

    def to_representation(self, value: Any) -> Any:
        return json_metric_value(value)

    def to_internal_value(self, data: Any) -> float:
        try:
            return stop_rules.parse_metric_value(data)
        except ValueError as exc:
            raise serializers.ValidationError(str(exc)) from exc


def json_metric_value(value: float) -> float | str:
    """A float as strict JSON can carry it: non-finite values become their tokens."""
    return value if math.isfinite(value) else stop_rules.format_metric_value(value)
