"""A team's campaigns side by side, and the period's burn-down against its allowance (pure: no
Django, no I/O; docs/domain.md §22.5).

- a campaign's ``spent`` = its incurred ledger total (rental + included, §13) + the accrual of
  its hourly runs still running (§18.1); its ``forecast`` = spent + what those runs add from now
  to the campaign's forecast end (its window's end without a landed forecast);
- the burn-down: the team's charges in the period (committed lots and posted entries, as
  `team_budget` counts them) cumulated in time order, the accrual added at ``now``, then a
  projection to the period's end at the forecast (`team_budget.PeriodBudget.money.forecast`),
  beside the allowance.

Units: money ``Decimal`` in the campaign's (or the allowance's) currency, 0.01 ROUND_HALF_UP;
datetimes timezone-aware UTC.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from decimal import ROUND_HALF_UP, Decimal
from typing import Final

from ledger.domain import spend as burn
from ledger.domain import team_budget as tb

CENT: Final = Decimal("0.01")


def _q(value: Decimal) -> Decimal:
    return value.quantize(CENT, rounding=ROUND_HALF_UP)


def _hours(start: datetime, end: datetime) -> Decimal:
    return Decimal(repr(max((end - start).total_seconds(), 0.0))) / 3600


@dataclass(frozen=True)
class CampaignMoney:
    spent: Decimal
    forecast: Decimal
    burn_per_hour: Decimal


def campaign_money(incurred: Decimal, burns: Sequence[tb.Burn], now: datetime) -> CampaignMoney:
    """Spent so far and forecast to the forecast end, from the campaign's running burns."""
    accrued = sum((b.money_per_hour * _hours(b.since, now) for b in burns), Decimal(0))
    ahead = sum(
        (b.money_per_hour * _hours(now, b.until) for b in burns if b.until is not None),
        Decimal(0),
    )
    rate = sum((b.money_per_hour for b in burns), Decimal(0))
    spent = _q(incurred + accrued)
    return CampaignMoney(spent, _q(spent + ahead), _q(rate))


def burn_down(
    budget: tb.PeriodBudget, charges: Sequence[tb.Charge], now: datetime
) -> burn.BurnChart | None:
    """The period's cumulative consumption against its money allowance (None without one)."""
    money = budget.money
    if money is None:
        return None
    currency = budget.allowance.currency
    mine = sorted(
        (
            c
            for c in charges
            if c.currency == currency
            and budget.start <= c.at < budget.end
            and tb.counts_against(budget.allowance, c.gpu_model)
        ),
        key=lambda c: c.at,
    )
    series: list[tuple[datetime, Decimal]] = [(budget.start, Decimal("0.00"))]
    total = Decimal(0)
    for charge in mine:
        if charge.at > now:
            continue  # a lot starting later is in the projection, not in what happened
        total += charge.amount
        series.append((charge.at, _q(total)))
    consumed = money.spent + money.committed
    # The accrual of the running hourly runs lands at now (or the period's end, once past).
    series.append((min(now, budget.end), consumed))
    projection = None
    if now < budget.end:
        words = (
            f"forecast {money.forecast} {currency} at the period's end: committed lots, posted "
            "entries and the running hourly runs until their forecast end"
        )
        projection = burn.Projection(budget.end, money.forecast, consumed, money.forecast, words)
    return burn.burn_chart(series, money.allowance, projection, currency)
