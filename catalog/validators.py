"""Validators shared by every layer's models (money carries an ISO 4217 currency code; names
people read carry no bidirectional control, catalog/domain/display_text.py)."""

from typing import Any

from django.core.exceptions import ValidationError
from django.core.validators import RegexValidator

from catalog.domain.display_text import bidi_refusal

currency_validator = RegexValidator(r"^[A-Z]{3}$", "Use a three-letter ISO 4217 code, e.g. USD.")


def no_bidi_controls(value: Any) -> None:
    """A model field's validator: the admin's forms show it as the field's error, and the API's
    model serializers answer 400 naming the field (docs/domain.md §25)."""
    refusal = bidi_refusal(str(value))
    if refusal is not None:
        raise ValidationError(refusal, code="bidi_control")
