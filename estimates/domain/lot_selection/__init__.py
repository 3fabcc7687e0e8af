"""Lot selection: the cheapest multiset of rental lots that serves every planned item.

The rule (docs/domain.md §9): rental plans are priced **per lot**, not per hour and not
per GPU. A lot's price covers its whole duration and all of its GPUs (a two-GPU B200 lot is charged
once). Choosing lots is therefore a packing problem, not a multiplication:

- One item is one run. A run never spans two lots and never uses two lots' memory: an item that
  needs more GPUs than a lot has, or more memory per GPU than the lot's GPU, cannot go on that lot.
- Items that share a ``group`` depend on each other and run sequentially on one and the same lot.
  Items in different groups are independent; buying several lots helps only them (in parallel).
- Everything placed on one lot runs sequentially: the sum of its hours must fit the lot's duration,
  and also the campaign window (a lot may last longer than the window, but the work must end inside
  it).
- A lot is usable for an item only if its GPU model matches the item's (``gpu=None``: any model).
  Model names are compared ignoring case, spaces, hyphens and an "NVIDIA" prefix.
- The plans considered (those usable by at least one item) must share one currency; mixing
  currencies raises ``ValueError`` because no exchange rate is ever invented here.

Units: hours are ``float`` (machine hours of work, lot durations, the campaign window); money is an
exact ``Decimal`` carried with a currency string and never converted to float; memory is in bytes.

Method: groups are split into independent components (groups that could never share a lot). A
component with at most ``EXACT_MAX_GROUPS`` groups is solved exactly by branch and bound over its
groups; larger ones use a heuristic (first-fit decreasing with a cost-per-hour-aware choice of new
lots, then local improvement: downsizing, emptying, merging, moving and re-packing lots). The result
states which one was used (``Selection.method``) and, for the heuristic, a proven lower bound.

The package holds one module per concept; what callers use is re-exported here, so
``from estimates.domain.lot_selection import X`` keeps working."""

from __future__ import annotations

from .offers import (
    CUT_ORDER,
    EXACT_MAX_GROUPS,
    EXACT_NODE_LIMIT,
    TIERS,
    CutOption,
    Lot,
    Method,
    MethodChoice,
    PlanItem,
    RentalPlanOffer,
    Selection,
    Tier,
    item_fits_plan,
    usable_hours,
)
from .selection import select_lots

__all__ = [
    "CUT_ORDER",
    "EXACT_MAX_GROUPS",
    "EXACT_NODE_LIMIT",
    "TIERS",
    "CutOption",
    "Lot",
    "Method",
    "MethodChoice",
    "PlanItem",
    "RentalPlanOffer",
    "Selection",
    "Tier",
    "item_fits_plan",
    "select_lots",
    "usable_hours",
]
