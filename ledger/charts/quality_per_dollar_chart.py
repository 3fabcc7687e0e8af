"""Quality per dollar: each item's best metric against what its runs cost so far, as a scatter
(pure: no Django, no I/O; docs/domain.md §18.6).

- ``loss_like``: which end of a metric is best, the one rule of campaigns/domain/metric_direction.py
  (re-exported here for the report's callers).
- ``value_chart``: cost on x (the campaign's currency, from 0 to the largest cost), the best
  value on y (the better end at the top), one labelled dot per item that has both: filled for
  its full runs, hollow and labelled "(pilot)" for its pilots, drawn apart (§18.6).

Units: money ``Decimal`` in the campaign's currency; metric values ``float`` as logged.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Final

from campaigns.domain.metric_direction import loss_like

__all__ = ["Dot", "ItemValue", "ValueChart", "best_in_words", "loss_like", "value_chart"]

_W: Final = 640
# At 11 px a label of this many characters fits in half the chart's width.
_LABEL_CHARS: Final = 40
_H: Final = 240
_PAD_L, _PAD_R, _PAD_T, _PAD_B = 70, 30, 16, 34


def best_in_words(metric: str, lower_is_better: bool) -> str:
    end = "lowest" if lower_is_better else "highest"
    return f"best = the {end} {metric} any of the item's runs logged"


@dataclass(frozen=True)
class ItemValue:
    item: str
    cost: Decimal
    best: float | None
    pilot: bool = False  # the item's pilot runs, drawn apart from its full runs


@dataclass(frozen=True)
class Dot:
    x: float
    y: float
    label_x: float
    label: str
    title: str
    # Labels of dots in the right half read leftwards, so none runs off the chart (issue 18).
    anchor: str = "start"
    pilot: bool = False


@dataclass(frozen=True)
class ValueChart:
    width: int
    height: int
    dots: tuple[Dot, ...]
    axis: tuple[tuple[float, float, str], ...]  # x, y, text
    title: str


def _named(item: ItemValue) -> str:
    return f"{item.item} (pilot)" if item.pilot else item.item


def _label(item: ItemValue) -> str:
    name = _named(item)
    return name if len(name) <= _LABEL_CHARS else name[: _LABEL_CHARS - 1] + "…"


def value_chart(
    items: Sequence[ItemValue], metric: str, lower_is_better: bool, currency: str
) -> ValueChart | None:
    """Place each item with a best value at (its cost, its best value); None when no item has
    one (nothing to compare)."""
    # A non-finite best (a diverged run) has no place on a value axis.
    shown = [i for i in items if i.best is not None and math.isfinite(float(i.best))]
    if not shown:
        return None
    top_cost = max([i.cost for i in shown] + [Decimal("0.01")])
    values = [float(i.best) for i in shown if i.best is not None]
    low, high = min(values), max(values)
    # Halved so that the span of two finite values never overflows (-1e308 to 1e308).
    half_span = high / 2 - low / 2
    plot_w, plot_h = _W - _PAD_L - _PAD_R, _H - _PAD_T - _PAD_B

    def x(cost: Decimal) -> float:
        return round(_PAD_L + plot_w * float(cost / top_cost), 1)

    def y(value: float) -> float:
        # The better end at the top: a planner reads "up and to the left" as the better buy.
        if half_span <= 0:
            return round(_PAD_T + plot_h * 0.5, 1)  # one value: the axis's middle
        gain = (high / 2 - value / 2) if lower_is_better else (value / 2 - low / 2)
        fraction = gain / half_span
        return round(_PAD_T + plot_h * (1 - fraction), 1)

    dots = tuple(
        Dot(
            x(i.cost),
            y(float(i.best)),
            x(i.cost) - 8 if x(i.cost) > _W / 2 else x(i.cost) + 8,
            _label(i),
            f"{_named(i)}: {metric} {i.best:g} for {i.cost} {currency}",
            "end" if x(i.cost) > _W / 2 else "start",
            i.pilot,
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
