"""Quality per dollar: each item's best metric against what its runs cost so far, as a scatter
(pure: no Django, no I/O; docs/domain.md §18.6).

- ``loss_like``: which end of a metric is best. A metric is loss-like (lower is better) when the
  campaign's threshold rule stops on it going up (comparator ``gt``/``ge``) or, with no such
  rule, when its name contains "loss"; otherwise higher is better.
- ``value_chart``: cost on x (the campaign's currency, from 0 to the largest cost), the best
  value on y (the better end at the top), one labelled dot per item that has both.

Units: money ``Decimal`` in the campaign's currency; metric values ``float`` as logged.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Final

_W: Final = 640
_H: Final = 240
_PAD_L, _PAD_R, _PAD_T, _PAD_B = 70, 30, 16, 34


def loss_like(metric: str, comparator: str = "") -> bool:
    """Lower is better: the stop rule fires on the metric growing, or its name says loss."""
    if comparator in ("gt", "ge"):
        return True
    if comparator in ("lt", "le"):
        return False
    return "loss" in metric.lower()


def best_in_words(metric: str, lower_is_better: bool) -> str:
    end = "lowest" if lower_is_better else "highest"
    return f"best = the {end} {metric} any of the item's runs logged"


@dataclass(frozen=True)
class ItemValue:
    item: str
    cost: Decimal
    best: float | None


@dataclass(frozen=True)
class Dot:
    x: float
    y: float
    label_x: float
    label: str
    title: str


@dataclass(frozen=True)
class ValueChart:
    width: int
    height: int
    dots: tuple[Dot, ...]
    axis: tuple[tuple[float, float, str], ...]  # x, y, text
    title: str


def value_chart(
    items: Sequence[ItemValue], metric: str, lower_is_better: bool, currency: str
) -> ValueChart | None:
    """Place each item with a best value at (its cost, its best value); None when no item has
    one (nothing to compare)."""
    shown = [i for i in items if i.best is not None]
    if not shown:
        return None
    top_cost = max([i.cost for i in shown] + [Decimal("0.01")])
    values = [float(i.best) for i in shown if i.best is not None]
    low, high = min(values), max(values)
    span = (high - low) or 1.0
    plot_w, plot_h = _W - _PAD_L - _PAD_R, _H - _PAD_T - _PAD_B

    def x(cost: Decimal) -> float:
        return round(_PAD_L + plot_w * float(cost / top_cost), 1)

    def y(value: float) -> float:
        # The better end at the top: a planner reads "up and to the left" as the better buy.
        fraction = (high - value) / span if lower_is_better else (value - low) / span
        return round(_PAD_T + plot_h * (1 - fraction), 1)

    dots = tuple(
        Dot(
            x(i.cost),
            y(float(i.best)),
            x(i.cost) + 8,
            i.item,
            f"{i.item}: {metric} {i.best:g} for {i.cost} {currency}",
        )
        for i in shown
        if i.best is not None
    )
    best_end, worst_end = (low, high) if lower_is_better else (high, low)
    axis = (
        (_PAD_L - 6, float(_PAD_T + 4), f"{best_end:g}"),
        (_PAD_L - 6, float(_PAD_T + plot_h + 4), f"{worst_end:g}"),
        (float(_PAD_L), float(_H - 10), f"0 {currency}"),
        (float(_W - _PAD_R), float(_H - 10), f"{top_cost} {currency}"),
    )
    direction = "lower" if lower_is_better else "higher"
    title = f"best {metric} ({direction} is better) against cost so far"
    return ValueChart(_W, _H, dots, axis, title)
