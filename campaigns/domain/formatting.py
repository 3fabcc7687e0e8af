"""How hours and money are written for people: one formatter each, for every page, message and
report of the project (pure: no Django imports).

Hours are shown to 0.01 h with trailing zeros dropped ("48", "22.5", "0.75"); money to the cent,
rounded half-up, never "-0.00" (docs/domain.md §12: amounts are exact decimals).
"""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal, localcontext
from typing import Final

CENT: Final = Decimal("0.01")
_ZERO_MONEY: Final = Decimal("0.00")
# Enough digits that quantizing any stored amount (14 digits) or any sum of them never overflows.
_PRECISION: Final = 60


def format_hours(hours: Decimal | float | int) -> str:
    """``Decimal("48.00")`` -> ``"48"``, ``22.5`` -> ``"22.5"``, ``-0.001`` -> ``"0"``."""
    with localcontext() as ctx:
        ctx.prec = _PRECISION
        value = Decimal(str(hours)).quantize(CENT, rounding=ROUND_HALF_UP)
    text = f"{value:f}".rstrip("0").rstrip(".")
    return "0" if text in ("", "-0") else text


def format_money(amount: Decimal) -> str:
    """``Decimal("47.1")`` -> ``"47.10"``: 2 decimals, ROUND_HALF_UP, never ``"-0.00"``."""
    with localcontext() as ctx:
        ctx.prec = _PRECISION
        rounded = amount.quantize(CENT, rounding=ROUND_HALF_UP)
    if rounded.is_zero():
        rounded = _ZERO_MONEY
    return format(rounded, "f")
