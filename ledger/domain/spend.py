"""Spend over time: the cumulative series, the burn rate, the projection and the lot windows,
and the burn-down chart's geometry (pure: no Django, no I/O; docs/domain.md §18).

- ``series``: the ledger's incurred postings (rental + included) in time order, each point the
  cumulative total after it, then one point at ``now`` adding the hourly accrual the ledger does
  not hold yet. Lot-covered runs add nothing: the lots are in the ledger since the commit.
- ``burn_rate_per_hour``: how fast spend grows now: the GPUs of the running hourly runs × the
  hourly rate. Lots are paid up front, so a lot-covered campaign burns 0 per hour until it
  buys more.
- ``projection``: spend at the forecast end if the runs running now keep going until then:
  ``spent + burn × hours to the forecast end``; ``low`` is everything stopping now (``spent``),
  ``high`` the runs going on until the end of the window. ``uncertainty`` says so in words.
- ``lots``: each reserved lot's ``start``, ``end`` (start + its hours) and ``hours_left``;
  ``window_hours_left``: the campaign window from the commit, what is left of it.

Units: money ``Decimal`` in the campaign's currency (quantized to 0.01 ROUND_HALF_UP), hours
``Decimal`` wall hours (0.01), datetimes timezone-aware.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import ROUND_HALF_UP, Decimal
from typing import Any, Final

CENT: Final = Decimal("0.01")


def _money(amount: Decimal) -> Decimal:
    return amount.quantize(CENT, rounding=ROUND_HALF_UP)


def hours_between(start: datetime, end: datetime) -> Decimal:
    """Wall hours from `start` to `end` (0.01 h, never negative)."""
    seconds = Decimal(repr((end - start).total_seconds()))
    return max(seconds / 3600, Decimal(0)).quantize(CENT, rounding=ROUND_HALF_UP)


@dataclass(frozen=True)
class Posting:
    at: datetime
    amount: Decimal


def cumulative_series(
    postings: Iterable[Posting], accrual: Decimal, now: datetime
) -> list[tuple[datetime, Decimal]]:
    """Cumulative incurred after each posting, then ``now`` with the unposted accrual added."""
    total = Decimal(0)
    points = []
    for posting in sorted(postings, key=lambda p: p.at):
        total += posting.amount
        points.append((posting.at, _money(total)))
    points.append((now, _money(total + accrual)))
    return points


@dataclass(frozen=True)
class Projection:
    at: datetime
    amount: Decimal
    low: Decimal
    high: Decimal
    uncertainty: str

    def as_json(self) -> dict[str, Any]:
        return {
            "at": self.at.isoformat(),
            "amount": str(self.amount),
            "low": str(self.low),
            "high": str(self.high),
            "uncertainty": self.uncertainty,
        }


def project(
    spent: Decimal,
    burn_rate_per_hour: Decimal,
    now: datetime,
    forecast_end: datetime | None,
    window_end: datetime | None,
) -> Projection | None:
    """Spend at the forecast end (or the window end without a forecast); None with neither."""
    end = forecast_end or window_end
    if end is None:
        return None
    to_end = hours_between(now, end)
    to_window = hours_between(now, window_end) if window_end else to_end
    amount = _money(spent + burn_rate_per_hour * to_end)
    high = _money(spent + burn_rate_per_hour * max(to_end, to_window))
    what = "forecast end" if forecast_end else "window end (no forecast has landed)"
    if burn_rate_per_hour == 0:
        words = (
            f"nothing accrues now (lots are paid up front, no hourly run is running): spend "
            f"stays {_money(spent)} to the {what} unless more is bought or posted"
        )
    else:
        words = (
            f"assumes the runs running now keep their GPUs for the {to_end} h to the {what} at "
            f"{burn_rate_per_hour} per hour; low: they all stop now; high: they run to the end "
            f"of the window ({max(to_end, to_window)} h); invoices and new runs not yet posted "
            "are not in it"
        )
    return Projection(end, amount, _money(spent), high, words)


@dataclass(frozen=True)
class LotWindow:
    start: datetime | None
    duration_hours: Decimal


def lot_windows(lots: Iterable[LotWindow], now: datetime) -> list[dict[str, Any]]:
    """Each lot's start, end and hours left (its whole duration before it starts; its whole
    duration, with no dates, while it has no start)."""
    rows = []
    for lot in lots:
        if lot.start is None:
            rows.append({"start": None, "end": None, "hours_left": str(_money(lot.duration_hours))})
            continue
        end = lot.start + timedelta(hours=float(lot.duration_hours))
        left = min(hours_between(max(now, lot.start), end), lot.duration_hours)
        rows.append(
            {"start": lot.start.isoformat(), "end": end.isoformat(), "hours_left": str(left)}
        )
    return rows


# --- The burn-down chart ------------------------------------------------------------------

SPEND = "#1d3f57"
PROJECTED = "#79aec8"
BUDGET = "#ba2121"
_W, _H, _PAD_L, _PAD_R, _PAD_T, _PAD_B = 640, 220, 70, 20, 16, 34


@dataclass(frozen=True)
class BurnChart:
    width: int
    height: int
    spend_path: str
    projection_path: str
    budget_y: float | None
    axis: tuple[tuple[float, float, str], ...]  # x, y, text
    title: str


def burn_chart(
    series: Sequence[tuple[datetime, Decimal]],
    budget: Decimal | None,
    projection: Projection | None,
    currency: str,
) -> BurnChart:
    """Place the cumulative spend (a step line), the projection (dashed) and the budget (a
    horizontal rule) in pixels: time on x, money on y from 0 to the largest figure."""
    times = [t for t, _ in series] + ([projection.at] if projection else [])
    t0, t1 = min(times), max(times)
    span = max((t1 - t0).total_seconds(), 1.0)
    values = [v for _, v in series] + ([projection.high] if projection else [])
    top = max([*values, budget or Decimal(0), Decimal("0.01")])
    plot_w, plot_h = _W - _PAD_L - _PAD_R, _H - _PAD_T - _PAD_B

    def x(t: datetime) -> float:
        return round(_PAD_L + plot_w * (t - t0).total_seconds() / span, 1)

    def y(v: Decimal) -> float:
        return round(_PAD_T + plot_h * (1 - float(v / top)), 1)

    parts = [f"M{x(series[0][0])},{y(Decimal(0))}"]
    previous = Decimal(0)
    for t, v in series:
        parts.append(f"L{x(t)},{y(previous)}")
        parts.append(f"L{x(t)},{y(v)}")
        previous = v
    last_t, last_v = series[-1]
    projection_path = (
        f"M{x(last_t)},{y(last_v)} L{x(projection.at)},{y(projection.amount)}" if projection else ""
    )
    axis = (
        (_PAD_L - 6, y(top) + 4, f"{_money(top)} {currency}"),
        (_PAD_L - 6, y(Decimal(0)) + 4, f"0 {currency}"),
        (_PAD_L, _H - 10, t0.strftime("%Y-%m-%d %H:%M")),
        (_W - _PAD_R, _H - 10, t1.strftime("%Y-%m-%d %H:%M")),
    )
    title = f"spent {last_v} {currency}" + (
        f" of a {budget} {currency} budget" if budget is not None else " (no budget set)"
    )
    return BurnChart(
        _W,
        _H,
        " ".join(parts),
        projection_path,
        None if budget is None else y(budget),
        axis,
        title,
    )
