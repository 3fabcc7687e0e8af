"""Validators shared by every layer's models (money carries an ISO 4217 currency code; names
people read carry no bidirectional control, catalog/domain/display_text.py)."""

from typing import Any

from django.core.exceptions import ValidationError
from iso4217 import Currency

from catalog.domain.display_text import bidi_refusal

# The codes of ISO 4217's current list (the `iso4217` package ships the maintenance agency's
# table), less XTS (reserved for testing) and XXX ("no currency"): money must name one.
CURRENCY_CODES = frozenset(c.code for c in Currency) - {"XTS", "XXX"}


def currency_validator(value: Any) -> None:
    """A model or serializer field's validator: a current ISO 4217 code, e.g. USD."""
    if not isinstance(value, str) or value not in CURRENCY_CODES:
        raise ValidationError(
            "%(value)s is not an ISO 4217 currency code: use a three-letter code, e.g. USD.",
            code="invalid",
            params={"value": repr(value)},
        )


def no_bidi_controls(value: Any) -> None:
    """A model field's validator: the admin's forms show it as the field's error, and the API's
    model serializers answer 400 naming the field (docs/domain.md §25)."""
    refusal = bidi_refusal(str(value))
    if refusal is not None:
        raise ValidationError(refusal, code="bidi_control")
