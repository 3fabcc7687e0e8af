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


def format_hours_fixed(hours: Decimal | float | int | None) -> str | None:
    """Hours to the hundredth, trailing zeros kept (``48`` -> ``"48.00"``; ``None`` -> ``None``):
    the closing report's columns line up. Rounded half-even, as Decimal's default context does."""
    if hours is None:
        return None
    return str(Decimal(str(hours)).quantize(CENT))


def format_percent(part: Decimal, whole: Decimal) -> str | None:
    """``part`` as a percentage of ``whole`` to one decimal (``-3, 12`` -> ``"-25.0"``); ``None``
    when ``whole`` is zero, since no share of nothing is defined."""
    if whole == 0:
        return None
    return str((part / whole * 100).quantize(Decimal("0.1")))


def format_hours_short(hours: float) -> str:
    """Hours to the tenth for chart labels, trailing zeros dropped (``48.0`` -> ``"48"``,
    ``2.25`` -> ``"2.2"``, ``0`` -> ``"0"``): a label has no room for hundredths."""
    text = f"{hours:.1f}".rstrip("0").rstrip(".")
    return "0" if text in ("", "-0") else text
