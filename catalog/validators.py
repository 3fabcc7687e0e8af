"""Validators shared by every layer's models (money carries an ISO 4217 currency code)."""

from django.core.validators import RegexValidator

currency_validator = RegexValidator(r"^[A-Z]{3}$", "Use a three-letter ISO 4217 code, e.g. USD.")
