"""How numbers read in the estimate's plain words.

Units: "GiB" is 2**30 bytes; counts use K/M/B/T (10**3 steps); money keeps two decimals and its
currency.
"""

from __future__ import annotations

from collections.abc import Sequence

from catalog.domain.catalog import GIB
from estimates.domain.formulas.cost import Money


def gib(n_bytes: int) -> str:
    return f"{n_bytes / GIB:,.1f} GiB"


def join_and(items: Sequence[str]) -> str:
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


def count_text(value: float) -> str:
    for scale, suffix in ((1e12, "T"), (1e9, "B"), (1e6, "M"), (1e3, "K")):
        if value >= scale:
            return f"{value / scale:.3g}{suffix}"
    return f"{value:.3g}"


def money_text(money: Money) -> str:
    return f"{money.amount:,.2f} {money.currency}"
