"""The packing problem lot selection solves (docs/domain.md §9): groups of sequential items,
bins (lots) holding them, and the offers that no cheaper offer dominates. Hours are float."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from decimal import Decimal

from catalog.domain.gpu_names import normalize_gpu

from .offers import CUT_ORDER, EPS, CutOption, Lot, PlanItem, RentalPlanOffer, usable_hours


@dataclass(frozen=True)
class Group:
    label: str
    items: tuple[PlanItem, ...]
    hours: float
    # Indices into the plan table of plans that can host every item of the group.
    compat: frozenset[int]


class Bin:
    """A lot under construction (mutable on purpose: the heuristic edits thousands of them)."""

    __slots__ = ("allowed", "members", "plan", "used")

    def __init__(self, plan: int, used: float, members: list[int], allowed: frozenset[int]):
        self.plan = plan
        self.used = used
        self.members = members
        self.allowed = allowed


def _price_scale(plans: Sequence[RentalPlanOffer]) -> int:
    """The power of ten that makes every plan's price an integer."""
    exponents = [p.price.as_tuple().exponent for p in plans]
    return max([0] + [-e for e in exponents if isinstance(e, int)])


def _rate(candidates: Sequence[int], price: Sequence[int], cap: Sequence[float]) -> float:
    """The cheapest price per usable hour among a group's candidate plans (inf: none)."""
    if not candidates:
        return math.inf
    return min(price[p] / cap[p] if cap[p] > 0 else math.inf for p in candidates)


class Problem:
    """Placeable groups with integer prices (scaled by 10**k) so the search compares exactly."""

    def __init__(
        self,
        plans: Sequence[RentalPlanOffer],
        window_hours: float,
        groups: Sequence[Group],
    ) -> None:
        self.plans = list(plans)
        self.cap = [usable_hours(p, window_hours) for p in plans]
        self.scale = _price_scale(plans)
        self.price = [int(p.price.scaleb(self.scale)) for p in plans]
        self.hours = [g.hours for g in groups]
        self.compat = [g.compat for g in groups]
        # Plans able to host the group alone, cheapest first.
        self.cands = [
            sorted(
                (p for p in g.compat if self.cap[p] >= g.hours - EPS),
                key=lambda p: (self.price[p], -self.cap[p], p),
            )
            for g in groups
        ]
        # Cheapest price per usable hour for each group: any lot hosting it pays at least this
        # rate for the group's hours, which gives the fractional lower bound.
        self.rate = [_rate(c, self.price, self.cap) for c in self.cands]
        self.min_price = [self.price[c[0]] if c else 0 for c in self.cands]

    def cost(self, bins: Sequence[Bin]) -> int:
        return sum(self.price[b.plan] for b in bins)

    def lower_bound(self, gs: Sequence[int]) -> int:
        if not gs:
            return 0
        frac = sum(self.rate[g] * self.hours[g] for g in gs if self.hours[g] > 0)
        return max(math.ceil(frac - 1e-6), max(self.min_price[g] for g in gs))

    def cheapest_plan(self, allowed: Iterable[int], hours: float) -> int | None:
        best: int | None = None
        for p in allowed:
            if self.cap[p] >= hours - EPS and (
                best is None
                or (self.price[p], -self.cap[p], p) < (self.price[best], -self.cap[best], best)
            ):
                best = p
        return best


def prune_dominated(plans: Sequence[RentalPlanOffer], window_hours: float) -> list[int]:
    """Drop plans another plan beats on every count; it cannot change the optimum, only speed."""
    keep: list[int] = []
    for i, p in enumerate(plans):
        cap_p = usable_hours(p, window_hours)
        dominated = False
        for j, q in enumerate(plans):
            if i == j or normalize_gpu(q.gpu) != normalize_gpu(p.gpu):
                continue
            cap_q = usable_hours(q, window_hours)
            at_least = (
                q.gpus_per_lot >= p.gpus_per_lot
                and q.gpu_memory_bytes >= p.gpu_memory_bytes
                and cap_q >= cap_p
                and q.price <= p.price
            )
            strictly = (
                q.gpus_per_lot > p.gpus_per_lot
                or q.gpu_memory_bytes > p.gpu_memory_bytes
                or cap_q > cap_p
                or q.price < p.price
            )
            if at_least and (strictly or j < i):
                dominated = True
                break
        if not dominated:
            keep.append(i)
    return keep


def choose_cut(items: Sequence[PlanItem], need: float) -> list[PlanItem] | None:
    """Fewest optional items covering ``need`` hours, exploratory before useful.

    Within a tier, one item that covers the rest is preferred (the smallest such); otherwise
    the largest goes first so fewer items are lost.
    """
    chosen: list[PlanItem] = []
    rest = need
    for tier in CUT_ORDER:
        pool = sorted((i for i in items if i.tier == tier), key=lambda i: (i.machine_hours, i.key))
        while rest > EPS and pool:
            single = next((i for i in pool if i.machine_hours >= rest - EPS), None)
            pick = single if single is not None else pool[-1]
            chosen.append(pick)
            pool.remove(pick)
            rest -= pick.machine_hours
        if rest <= EPS:
            return chosen
    return None


@dataclass
class Placing:
    """What placing the items found before the search: groups to pack and what cannot be."""

    placeable: list[Group] = field(default_factory=list)
    unplaced: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    cut_options: list[CutOption] = field(default_factory=list)


@dataclass(frozen=True)
class Packed:
    """The search's answer: lots in item order, their total, and how sure it is."""

    lots: list[Lot]
    total: Decimal
    exact: bool
    lower_bound: Decimal
