"""A team's budget over periods: allowances per month or quarter against what the team's
campaigns spent, committed and will spend (pure: no Django, no I/O; docs/domain.md §22).

Facts:
- an ``Allowance`` for one period (``month`` or ``quarter``, starting on its first day, UTC):
  money (``amount`` in ``currency``) and/or ``gpu_hours``, optionally for one ``gpu_model``
  only ("" counts every GPU);
- a ``Charge`` is a point in time: a posted ledger entry (rental or included; external costs
  stand apart as the ledger keeps them, §12) or a committed lot. ``committed`` says which: a
  lot is bought at commit for its whole duration, so its price and GPU-hours count in the
  period of the lot's start; a posted entry counts in the period of its posting;
- a ``Burn`` is an hourly-priced running run: ``money_per_hour`` and ``gpus`` (GPU-hours per
  hour) from ``since`` (its start) on. Up to ``now`` it is spent (accrual the ledger does not
  hold yet), split over the periods by time; from ``now`` to ``until`` (the campaign's forecast
  end, else its window end) it is forecast.

Per period and allowance:
- ``spent`` = posted entries + accrual up to now, in the period;
- ``committed`` = committed lots whose start falls in the period;
- ``forecast`` = spent + committed + the burns from now to the period's end (or their
  ``until``, whichever is first);
- ``left`` = allowance − spent − committed (negative once it is exceeded);
- ``run_out_at``: with the period running and something burning now, ``now + left ÷ burn``
  if that falls before the period's end; ``now`` when nothing is left; else None (it does not
  run out in the period at the current burn).

Units: money ``Decimal`` in the allowance's currency (quantized to 0.01, ROUND_HALF_UP; a charge
in another currency is not counted in a money allowance and is reported in
``other_currencies``); GPU-hours ``Decimal`` (0.01); datetimes timezone-aware UTC; periods are
half-open ``[start, end)``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from decimal import ROUND_HALF_UP, Decimal
from typing import Final, Literal

from catalog.domain.gpu_names import normalize_gpu

CENT: Final = Decimal("0.01")
ZERO: Final = Decimal("0.00")
PeriodKind = Literal["month", "quarter"]
PERIOD_KINDS: Final = ("month", "quarter")


def _q(value: Decimal) -> Decimal:
    return value.quantize(CENT, rounding=ROUND_HALF_UP)


def period_bounds(kind: PeriodKind, day: date) -> tuple[datetime, datetime]:
    """The month or quarter holding `day`, as UTC datetimes ``[start, end)``."""
    first_month = day.month if kind == "month" else 3 * ((day.month - 1) // 3) + 1
    start = datetime(day.year, first_month, 1, tzinfo=UTC)
    months = 1 if kind == "month" else 3
    year, month = divmod(first_month - 1 + months, 12)
    end = datetime(day.year + year, month + 1, 1, tzinfo=UTC)
    return start, end


def is_period_start(kind: PeriodKind, day: date) -> bool:
    """`day` opens a month or quarter this module can bound (its year at most LAST_YEAR)."""
    return day.year <= LAST_YEAR and period_bounds(kind, day)[0].date() == day


def period_label(kind: PeriodKind, start: date) -> str:
    """``2026-03`` for a month, ``2026-Q1`` for a quarter (the export's `period` parameter)."""
    if kind == "month":
        return f"{start.year:04d}-{start.month:02d}"
    return f"{start.year:04d}-Q{(start.month - 1) // 3 + 1}"


# ASCII digits only (`int()` takes Arabic-Indic and other scripts' digits too): YYYY-MM, YYYY-Qn.
_PERIOD = re.compile(r"(\d{4})-(?:(0[1-9]|1[0-2])|[Qq]([1-4]))", re.ASCII)
# A period's end is the next one's start: the last year whose end `date` can still hold.
FIRST_YEAR, LAST_YEAR = 1900, 9998


def parse_period(text: str) -> tuple[PeriodKind, date]:
    """``YYYY-MM`` or ``YYYY-Qn`` (ASCII digits, years FIRST_YEAR to LAST_YEAR) → (kind, first
    day); ValueError naming the expected shape."""
    found = _PERIOD.fullmatch(text.strip())
    if found is None or not FIRST_YEAR <= int(found.group(1)) <= LAST_YEAR:
        raise ValueError(
            f"{text!r} is not a period: use YYYY-MM or YYYY-Qn, in ASCII digits, "
            f"a year from {FIRST_YEAR} to {LAST_YEAR}"
        )
    year, month, quarter = found.groups()
    if quarter:
        return "quarter", date(int(year), 3 * int(quarter) - 2, 1)
    return "month", date(int(year), int(month), 1)


@dataclass(frozen=True)
class Allowance:
    kind: PeriodKind
    start: date
    amount: Decimal | None = None
    currency: str = ""
    gpu_hours: Decimal | None = None
    gpu_model: str = ""
    id: int | None = None


@dataclass(frozen=True)
class Charge:
    at: datetime
    amount: Decimal
    currency: str
    gpu_hours: Decimal = ZERO
    gpu_model: str = ""
    committed: bool = False
    campaign_id: int | None = None


@dataclass(frozen=True)
class Burn:
    since: datetime
    money_per_hour: Decimal
    currency: str
    gpus: int = 0
    until: datetime | None = None
    gpu_model: str = ""
    campaign_id: int | None = None


@dataclass(frozen=True)
class Figures:
    """One quantity (money or GPU-hours) of one period."""

    allowance: Decimal
    spent: Decimal
    committed: Decimal
    forecast: Decimal
    left: Decimal
    burn_per_hour: Decimal


@dataclass(frozen=True)
class PeriodBudget:
    allowance: Allowance
    start: datetime
    end: datetime
    money: Figures | None
    gpu_hours: Figures | None
    run_out_at: datetime | None
    other_currencies: tuple[str, ...] = field(default=())

    @property
    def label(self) -> str:
        return period_label(self.allowance.kind, self.allowance.start)

    @property
    def forecast_exceeds(self) -> bool:
        """The period's forecast passes its allowance (money or GPU-hours)."""
        return any(f is not None and f.forecast > f.allowance for f in (self.money, self.gpu_hours))


def _hours(start: datetime, end: datetime) -> Decimal:
    seconds = (end - start).total_seconds()
    return Decimal(repr(max(seconds, 0.0))) / 3600


def _overlap(a0: datetime, a1: datetime, b0: datetime, b1: datetime) -> Decimal:
    return _hours(max(a0, b0), min(a1, b1)) if min(a1, b1) > max(a0, b0) else Decimal(0)


def counts_against(allowance: Allowance, gpu_model: str) -> bool:
    return not allowance.gpu_model or normalize_gpu(allowance.gpu_model) == normalize_gpu(gpu_model)


def _figures(
    allowance_value: Decimal,
    charges: Iterable[tuple[Charge, Decimal]],
    burns: Iterable[tuple[Burn, Decimal]],
    span: tuple[datetime, datetime],
    now: datetime,
) -> Figures:
    """Sum one quantity: `charges` and `burns` come paired with their value of that quantity
    (money or GPU-hours per charge; per hour for a burn)."""
    start, end = span
    spent = committed = ahead = rate_now = Decimal(0)
    for charge, value in charges:
        if start <= charge.at < end:
            if charge.committed:
                committed += value
            else:
                spent += value
    for burn, per_hour in burns:
        stop = burn.until if burn.until is not None else end
        spent += per_hour * _overlap(burn.since, now, start, end)
        ahead += per_hour * _overlap(max(now, burn.since), stop, start, end)
        if burn.since <= now < stop and start <= now < end:
            rate_now += per_hour
    spent, committed = _q(spent), _q(committed)
    return Figures(
        allowance=_q(allowance_value),
        spent=spent,
        committed=committed,
        forecast=_q(spent + committed + ahead),
        left=_q(allowance_value - spent - committed),
        burn_per_hour=_q(rate_now),
    )


def _run_out(figures: Figures | None, now: datetime, end: datetime) -> datetime | None:
    if figures is None or not now < end:
        return None
    if figures.left <= 0:
        return now
    if figures.burn_per_hour <= 0:
        return None
    when = now + timedelta(hours=float(figures.left / figures.burn_per_hour))
    return when if when < end else None


def _money(
    allowance: Allowance,
    mine: Sequence[Charge],
    running: Sequence[Burn],
    span: tuple[datetime, datetime],
    now: datetime,
) -> tuple[Figures | None, tuple[str, ...]]:
    """The money figures in the allowance's currency, and the other currencies seen: those
    are not converted, only named, so a sum never mixes currencies."""
    if allowance.amount is None:
        return None, ()
    others = {c.currency for c in mine if c.currency != allowance.currency}
    others |= {b.currency for b in running if b.currency != allowance.currency}
    money = _figures(
        allowance.amount,
        [(c, c.amount) for c in mine if c.currency == allowance.currency],
        [(b, b.money_per_hour) for b in running if b.currency == allowance.currency],
        span,
        now,
    )
    return money, tuple(sorted(others))


def _gpu_hours(
    allowance: Allowance,
    mine: Sequence[Charge],
    running: Sequence[Burn],
    span: tuple[datetime, datetime],
    now: datetime,
) -> Figures | None:
    """The GPU-hour figures, when the allowance caps GPU-hours."""
    if allowance.gpu_hours is None:
        return None
    return _figures(
        allowance.gpu_hours,
        [(c, c.gpu_hours) for c in mine],
        [(b, Decimal(b.gpus)) for b in running],
        span,
        now,
    )


def period_budget(
    allowance: Allowance, charges: Sequence[Charge], burns: Sequence[Burn], now: datetime
) -> PeriodBudget:
    """The allowance's period: spent, committed, forecast, left and run-out date (the earlier
    of the money's and the GPU-hours')."""
    span = period_bounds(allowance.kind, allowance.start)
    mine = [c for c in charges if counts_against(allowance, c.gpu_model)]
    running = [b for b in burns if counts_against(allowance, b.gpu_model)]
    money, others = _money(allowance, mine, running, span, now)
    hours = _gpu_hours(allowance, mine, running, span, now)
    outs = [t for t in (_run_out(money, now, span[1]), _run_out(hours, now, span[1])) if t]
    return PeriodBudget(
        allowance, span[0], span[1], money, hours, min(outs) if outs else None, others
    )


def team_budget(
    allowances: Iterable[Allowance],
    charges: Sequence[Charge],
    burns: Sequence[Burn],
    now: datetime,
) -> list[PeriodBudget]:
    """Every allowance's period, in period order."""
    return [
        period_budget(a, charges, burns, now)
        for a in sorted(allowances, key=lambda a: (a.start, a.kind, a.gpu_model, a.currency))
    ]


def exceeded_by(
    allowances: Sequence[Allowance],
    charges: Sequence[Charge],
    burns: Sequence[Burn],
    extra: Sequence[Charge],
    now: datetime,
) -> list[tuple[PeriodBudget, PeriodBudget]]:
    """What a commit would take over: each period (before, after adding `extra`, the charges the
    commit would add) whose forecast after passes its allowance and that `extra` changes."""
    pairs = []
    for allowance in allowances:
        old = period_budget(allowance, charges, burns, now)
        new = period_budget(allowance, [*charges, *extra], burns, now)
        if new.forecast_exceeds and (new.money, new.gpu_hours) != (old.money, old.gpu_hours):
            pairs.append((old, new))
    return pairs


def describe(budget: PeriodBudget) -> str:
    """The figures in words, e.g. "2026-Q1: forecast 16,200.00 USD of a 15,000.00 USD
    allowance (spent 1,200.00, committed 15,000.00)"."""
    parts = []
    for figures, unit in ((budget.money, budget.allowance.currency), (budget.gpu_hours, "GPU-h")):
        if figures is None:
            continue
        parts.append(
            f"forecast {figures.forecast:,} {unit} of a {figures.allowance:,} {unit} allowance "
            f"(spent {figures.spent:,}, committed {figures.committed:,}, left {figures.left:,})"
        )
    scope = f" on {budget.allowance.gpu_model}" if budget.allowance.gpu_model else ""
    return f"{budget.label}{scope}: " + "; ".join(parts)
