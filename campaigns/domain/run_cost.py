"""What a run costs so far, and what a campaign has spent (pure: no Django, no I/O).

A run's cost is an allocation of money, never a second charge (docs/domain.md §18):

``lot_share``
    The campaign reserved lots: their price is already in the ledger (a rental entry per lot,
    posted at commit). A run's cost is its share of that money: GPU-hours × the lots' price per
    GPU-hour (lot price ÷ lot hours ÷ GPUs per lot). Spend does not grow with it.
``hourly``
    The campaign pays by the hour (``hourly_rate_per_gpu``, no lots): a run costs its GPU-hours ×
    the rate. While it runs the amount is accrued (counted in spend, not yet in the ledger); when
    it finishes it is posted once to the ledger as a rental entry, and stops being accrued.

Hours: the run's hours as campaigns/domain/run_hours.py gives them (a finished run's measured,
stated or corrected hours; a running run's measured hours up to now), never recomputed here.
GPU-hours = hours × the run's GPUs.

Units: hours are ``Decimal`` wall hours; money is ``Decimal`` in the campaign's currency,
quantized to 0.01 with ROUND_HALF_UP only at the end (a rate is kept to 0.0001).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from decimal import ROUND_HALF_UP, Decimal
from typing import Final, Literal

from campaigns.domain.run_hours import RunClock, hours_so_far

Basis = Literal["lot_share", "hourly"]

CENT: Final = Decimal("0.01")
RATE_PLACES: Final = Decimal("0.0001")
ZERO: Final = Decimal("0.00")


@dataclass(frozen=True)
class LotPrice:
    """One reserved lot line: `quantity` lots of `gpus_per_lot` GPUs for `duration_hours` each,
    `price` per lot, of GPU model `gpu`."""

    price: Decimal
    quantity: int
    duration_hours: Decimal
    gpus_per_lot: int
    gpu: str = ""

    @property
    def total_price(self) -> Decimal:
        return self.price * self.quantity

    @property
    def gpu_hours(self) -> Decimal:
        return self.duration_hours * self.gpus_per_lot * self.quantity


@dataclass(frozen=True)
class Rate:
    """Money per GPU-hour and how it was found."""

    per_gpu_hour: Decimal
    basis: Basis


def money(amount: Decimal) -> Decimal:
    return amount.quantize(CENT, rounding=ROUND_HALF_UP)


def same_gpu(a: str, b: str) -> bool:
    """GPU names compared as people write them: case, spaces, hyphens and "NVIDIA" ignored."""

    def norm(name: str) -> str:
        return re.sub(r"[\s_-]+|nvidia", "", name.lower())

    return bool(a and b) and norm(a) == norm(b)


def lot_rate(lots: Iterable[LotPrice], gpu: str = "") -> Decimal | None:
    """Price per GPU-hour of the reserved lots: their total price over their total GPU-hours.

    With `gpu` named (the GPU the run's item needs) only the lots of that GPU count, when there
    are any; otherwise all of them (a run that says nothing is charged the campaign's mean).
    None without lots (or without GPU-hours).
    """
    every = [lot for lot in lots if lot.quantity > 0]
    chosen = [lot for lot in every if same_gpu(lot.gpu, gpu)] or every
    gpu_hours = sum((lot.gpu_hours for lot in chosen), Decimal(0))
    if gpu_hours <= 0:
        return None
    total = sum((lot.total_price for lot in chosen), Decimal(0))
    return (total / gpu_hours).quantize(RATE_PLACES, rounding=ROUND_HALF_UP)


def effective_rate(
    lots: Iterable[LotPrice], hourly_rate_per_gpu: Decimal | None, gpu: str = ""
) -> Rate | None:
    """The campaign's rate for a run: the lot share when lots are reserved (their money is in
    the ledger already), else the hourly rate, else None (nothing says what an hour costs)."""
    share = lot_rate(lots, gpu)
    if share is not None:
        return Rate(share, "lot_share")
    if hourly_rate_per_gpu is not None:
        return Rate(hourly_rate_per_gpu, "hourly")
    return None


def run_cost(hours: Decimal, gpus: int, rate: Rate) -> Decimal:
    """GPU-hours × rate, in cents (ROUND_HALF_UP)."""
    return money(hours * max(gpus, 1) * rate.per_gpu_hour)


@dataclass(frozen=True)
class RunAccrual:
    """A run's cost and whether the ledger already holds it (an hourly run posted at finish)."""

    cost: Decimal
    basis: Basis
    posted: bool


def unposted_accrual(runs: Iterable[RunAccrual]) -> Decimal:
    """The hourly cost the ledger does not hold yet. Lot shares are never added (the lots'
    price is the ledger's), and a posted run is the ledger's now: each euro is counted once."""
    return sum(
        (r.cost for r in runs if r.basis == "hourly" and not r.posted),
        ZERO,
    )


def campaign_spend(ledger_incurred: Decimal, runs: Iterable[RunAccrual]) -> Decimal:
    """What the campaign has spent: the ledger's incurred total plus the unposted accrual."""
    return money(ledger_incurred + unposted_accrual(runs))


def cost_at_step(step: int, last_step: int, total: Decimal) -> Decimal:
    """A finished run's cost at `step`: its total spread evenly over its steps (0 at step 0,
    the total at its last step and beyond)."""
    if last_step <= 0:
        return money(total)
    fraction = Decimal(min(max(step, 0), last_step)) / Decimal(last_step)
    return money(total * fraction)


def cost_at_time(at: datetime, clock: RunClock, gpus: int, rate: Rate) -> Decimal:
    """A running run's cost when a point was logged: the hours it had run then."""
    return run_cost(hours_so_far(clock, at), gpus, rate)
