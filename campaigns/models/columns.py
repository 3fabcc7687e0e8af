"""Column shapes the campaign tables share: hours and money as fixed-point decimals."""

from __future__ import annotations

from decimal import Decimal

from django.core.validators import MinValueValidator

HOURS = {"max_digits": 9, "decimal_places": 2, "validators": [MinValueValidator(Decimal("0"))]}


MONEY = {"max_digits": 14, "decimal_places": 2}
