"""Money for GPU time and rental lots.

Rule: cost = GPUs x hours x hourly rate + stated extras; a lot's price covers all its GPUs
(docs/domain.md §9). Float hours enter through their shortest repr; each amount is quantized
once to cents (ROUND_HALF_UP).
Units: ``Decimal`` with a currency, never float.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from estimates.domain.formulas.checks import (
    EstimateInputError,
    as_decimal,
    cents,
    non_negative_money,
)

# ---------------------------------------------------------------------------------------- cost


@dataclass(frozen=True)
class Money:
    """An exact amount with its currency."""

    amount: Decimal
    currency: str


def hourly_cost(
    gpus: int,
    hours: float | Decimal,
    rate_per_gpu_hour: Decimal,
    extra: Decimal = Decimal("0"),
) -> Decimal:
    """Cost = GPUs x hours x hourly rate + extra, quantized to cents (ROUND_HALF_UP).

    Source: docs/domain.md §9 ("GPUs x time x hourly rate + additional
    infrastructure costs"). ``extra`` is what the user states (storage, network); no tax or
    transfer cost is invented.
    """
    if isinstance(gpus, bool) or not isinstance(gpus, int) or gpus < 0:
        raise EstimateInputError("gpus", f"must be an integer >= 0, got {gpus!r}")
    exact = (
        gpus
        * as_decimal(hours, "hours")
        * non_negative_money(rate_per_gpu_hour, "rate_per_gpu_hour")
    )
    return cents(exact + non_negative_money(extra, "extra"), "hours")


def lot_cost(lots: int, price_per_lot: Decimal) -> Decimal:
    """Cost of ``lots`` rental lots = lots x price per lot, quantized to cents.

    Source: docs/domain.md §9 (two 3-day RTX 4090 lots = 94.28 USD). A lot's price already
    covers all its GPUs: it is never multiplied by the GPUs per lot.
    """
    if isinstance(lots, bool) or not isinstance(lots, int) or lots < 0:
        raise EstimateInputError("lots", f"must be an integer >= 0, got {lots!r}")
    return cents(lots * non_negative_money(price_per_lot, "price_per_lot"), "lots")


def scaled_amount(amount: Decimal, ratio: float) -> Decimal:
    """``amount`` x ``ratio``, to cents (ROUND_HALF_UP); the ratio through its shortest repr."""
    return cents(non_negative_money(amount, "amount") * as_decimal(ratio, "ratio"), "amount")
