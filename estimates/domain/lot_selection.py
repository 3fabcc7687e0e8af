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
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from typing import Literal

from campaigns.domain.formatting import format_hours
from catalog.domain.gpu_names import normalize_gpu

Tier = Literal["mandatory", "useful", "exploratory"]
Method = Literal["exact", "heuristic"]
MethodChoice = Literal["auto", "exact", "heuristic"]

TIERS: tuple[Tier, ...] = ("mandatory", "useful", "exploratory")
# Cut order for a reduced protocol: exploratory work goes before useful work; mandatory never.
CUT_ORDER: tuple[Tier, ...] = ("exploratory", "useful")

EXACT_MAX_GROUPS = 12
EXACT_NODE_LIMIT = 200_000
# Hours are floats; this absorbs summation noise so 24 + 24 + 24 still fits a 72 h lot.
_EPS = 1e-9
_MINUS = "\u2212"
_CENT = Decimal("0.01")


@dataclass(frozen=True)
class PlanItem:
    """One planned run: its machine hours and what a lot must offer to host it."""

    key: str
    machine_hours: float
    gpu: str | None = None
    gpus_needed: int = 1
    memory_bytes_per_gpu: int | None = None
    tier: Tier = "mandatory"
    # None: the item is independent of every other item.
    group: str | None = None
    name: str = ""

    def __post_init__(self) -> None:
        if not self.key:
            raise ValueError("an item needs a non-empty key")
        if not math.isfinite(self.machine_hours) or self.machine_hours < 0:
            raise ValueError(
                f"item {self.key!r}: machine_hours must be finite and >= 0, "
                f"got {self.machine_hours!r}"
            )
        if self.gpus_needed < 1:
            raise ValueError(f"item {self.key!r}: gpus_needed must be >= 1")
        if self.memory_bytes_per_gpu is not None and self.memory_bytes_per_gpu < 0:
            raise ValueError(f"item {self.key!r}: memory_bytes_per_gpu must be >= 0")
        if self.tier not in TIERS:
            raise ValueError(f"item {self.key!r}: tier must be one of {TIERS}, got {self.tier!r}")

    @property
    def label(self) -> str:
        return self.name or self.key


@dataclass(frozen=True)
class RentalPlanOffer:
    """A rental plan: one lot of ``gpus_per_lot`` GPUs for ``duration_hours`` at ``price``."""

    provider: str
    name: str
    gpu: str
    gpus_per_lot: int
    gpu_memory_bytes: int
    duration_hours: float
    price: Decimal
    currency: str

    def __post_init__(self) -> None:
        if not isinstance(self.price, Decimal):
            raise TypeError(f"plan {self.name!r}: price must be a Decimal, not {type(self.price)}")
        if not self.price.is_finite() or self.price < 0:
            raise ValueError(f"plan {self.name!r}: price must be finite and >= 0")
        if self.gpus_per_lot < 1:
            raise ValueError(f"plan {self.name!r}: gpus_per_lot must be >= 1")
        if self.gpu_memory_bytes < 0:
            raise ValueError(f"plan {self.name!r}: gpu_memory_bytes must be >= 0")
        if not math.isfinite(self.duration_hours) or self.duration_hours <= 0:
            raise ValueError(f"plan {self.name!r}: duration_hours must be finite and > 0")
        if not self.currency:
            raise ValueError(f"plan {self.name!r}: currency is required")


@dataclass(frozen=True)
class Lot:
    """One bought lot and the items that run on it, sequentially, in this order."""

    plan: RentalPlanOffer
    item_keys: tuple[str, ...]
    hours: float


@dataclass(frozen=True)
class CutOption:
    """A reduced protocol: cutting these optional items lets ``plan`` do the work.

    ``instead_of`` is the plan it replaces, or None when the work had no lot at all.
    """

    item_keys: tuple[str, ...]
    hours_cut: float
    plan: RentalPlanOffer
    instead_of: RentalPlanOffer | None


@dataclass(frozen=True)
class Selection:
    lots: tuple[Lot, ...]
    total: Decimal
    currency: str
    feasible: bool
    unplaced: tuple[str, ...]
    explanation: tuple[str, ...]
    method: Method
    # Proven minimum cost for the placed work; equals ``total`` when the search was exact.
    lower_bound: Decimal
    cut_options: tuple[CutOption, ...] = ()


# --------------------------------------------------------------------------- compatibility


def item_fits_plan(item: PlanItem, plan: RentalPlanOffer) -> bool:
    """Whether the lot can host the run at all, ignoring hours."""
    if item.gpu is not None and normalize_gpu(item.gpu) != normalize_gpu(plan.gpu):
        return False
    if item.gpus_needed > plan.gpus_per_lot:
        return False
    need = item.memory_bytes_per_gpu
    return need is None or need <= plan.gpu_memory_bytes


def usable_hours(plan: RentalPlanOffer, window_hours: float) -> float:
    """Hours of work a lot can hold: its duration, cut at the campaign window."""
    return min(plan.duration_hours, window_hours)


# --------------------------------------------------------------------------- formatting


_fmt_hours = format_hours


def _fmt_money(amount: Decimal, currency: str) -> str:
    # Exact prices with more than two decimals are shown as they are rather than rounded away.
    # Beyond 24 integer digits a quantize to cents would exceed Decimal's 28-digit context
    # (InvalidOperation): such an amount is shown as it is.
    if not amount.is_finite() or amount.adjusted() >= 24:
        return f"{amount} {currency}"
    shown = (
        amount.quantize(_CENT, rounding=ROUND_HALF_UP)
        if amount == amount.quantize(_CENT)
        else amount
    )
    return f"{shown} {currency}"


def _fmt_bytes(n: int) -> str:
    return f"{_fmt_hours(n / 2**30)} GiB"


def _duration_label(plan: RentalPlanOffer) -> str:
    days = plan.duration_hours / 24
    if days >= 1 and abs(days - round(days)) < 1e-9:
        return f"{round(days)}-day"
    return f"{_fmt_hours(plan.duration_hours)} h"


def _lot_name(plan: RentalPlanOffer, peers: Iterable[RentalPlanOffer]) -> str:
    """Name a lot like "the 3-day lot"; provider and plan are added only if that is ambiguous."""
    base = _duration_label(plan)
    if any(p != plan and _duration_label(p) == base for p in peers):
        return f"the {base} lot ({plan.provider} {plan.name})"
    return f"the {base} lot"


def _plan_title(plan: RentalPlanOffer) -> str:
    return f"{plan.provider} {plan.name}".strip()


def _join(words: Sequence[str]) -> str:
    if len(words) <= 1:
        return "".join(words)
    return ", ".join(words[:-1]) + " and " + words[-1]


def _describe_cut(items: Sequence[PlanItem]) -> str:
    """Name the cut, e.g. "the exploratory item X and the useful items Y and Z"."""
    parts: list[str] = []
    for tier in CUT_ORDER:
        labels = [i.label for i in items if i.tier == tier]
        if labels:
            noun = "item" if len(labels) == 1 else "items"
            parts.append(f"the {tier} {noun} {_join(labels)}")
    return _join(parts)


# --------------------------------------------------------------------------- internal model


@dataclass(frozen=True)
class _Group:
    label: str
    items: tuple[PlanItem, ...]
    hours: float
    # Indices into the plan table of plans that can host every item of the group.
    compat: frozenset[int]


class _Bin:
    """A lot under construction (mutable on purpose: the heuristic edits thousands of them)."""

    __slots__ = ("allowed", "members", "plan", "used")

    def __init__(self, plan: int, used: float, members: list[int], allowed: frozenset[int]):
        self.plan = plan
        self.used = used
        self.members = members
        self.allowed = allowed


class _Problem:
    """Placeable groups with integer prices (scaled by 10**k) so the search compares exactly."""

    def __init__(
        self,
        plans: Sequence[RentalPlanOffer],
        window_hours: float,
        groups: Sequence[_Group],
    ) -> None:
        self.plans = list(plans)
        self.cap = [usable_hours(p, window_hours) for p in plans]
        exponents = [p.price.as_tuple().exponent for p in plans]
        scale = max([0] + [-e for e in exponents if isinstance(e, int)])
        self.scale = scale
        self.price = [int(p.price.scaleb(scale)) for p in plans]
        self.hours = [g.hours for g in groups]
        self.compat = [g.compat for g in groups]
        # Plans able to host the group alone, cheapest first.
        self.cands = [
            sorted(
                (p for p in g.compat if self.cap[p] >= g.hours - _EPS),
                key=lambda p: (self.price[p], -self.cap[p], p),
            )
            for g in groups
        ]
        # Cheapest price per usable hour for each group: any lot hosting it pays at least this
        # rate for the group's hours, which gives the fractional lower bound.
        self.rate = [
            min(self.price[p] / self.cap[p] if self.cap[p] > 0 else math.inf for p in c)
            if c
            else math.inf
            for c in self.cands
        ]
        self.min_price = [self.price[c[0]] if c else 0 for c in self.cands]

    def cost(self, bins: Sequence[_Bin]) -> int:
        return sum(self.price[b.plan] for b in bins)

    def lower_bound(self, gs: Sequence[int]) -> int:
        if not gs:
            return 0
        frac = sum(self.rate[g] * self.hours[g] for g in gs if self.hours[g] > 0)
        return max(math.ceil(frac - 1e-6), max(self.min_price[g] for g in gs))

    def cheapest_plan(self, allowed: Iterable[int], hours: float) -> int | None:
        best: int | None = None
        for p in allowed:
            if self.cap[p] >= hours - _EPS and (
                best is None
                or (self.price[p], -self.cap[p], p) < (self.price[best], -self.cap[best], best)
            ):
                best = p
        return best


def _prune_dominated(plans: Sequence[RentalPlanOffer], window_hours: float) -> list[int]:
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


# --------------------------------------------------------------------------- heuristic


def _greedy(
    prob: _Problem, gs: Sequence[int], strategy: int, constrained_first: bool = False
) -> list[_Bin]:
    """First-fit decreasing (best fit among open lots); ``strategy`` picks how new lots are chosen.

    0: lowest price per hour the remaining compatible work can actually fill,
    1: lowest price per usable hour, 2: lowest price.
    ``constrained_first`` places groups that only expensive lots can host before the flexible
    ones, so flexible work fills the slack of expensive lots instead of crowding out the work
    that has nowhere else to go.
    """
    hours, compat, cap, price = prob.hours, prob.compat, prob.cap, prob.price
    if constrained_first:
        order = sorted(gs, key=lambda g: (-prob.rate[g], -hours[g], len(compat[g]), g))
    else:
        order = sorted(gs, key=lambda g: (-hours[g], len(compat[g]), g))
    if not order:
        return []
    smallest = min(hours[g] for g in order)
    remaining: dict[int, float] = {}
    for g in gs:
        for p in compat[g]:
            remaining[p] = remaining.get(p, 0.0) + hours[g]
    bins: list[_Bin] = []
    # Lots too full for even the smallest group leave the scan: keeps this linear-ish.
    open_bins: list[_Bin] = []
    for g in order:
        h = hours[g]
        comp = compat[g]
        best: _Bin | None = None
        best_left = math.inf
        for b in open_bins:
            if b.plan in comp:
                left = cap[b.plan] - b.used - h
                if -_EPS <= left < best_left:
                    best, best_left = b, left
        if best is not None:
            best.used += h
            best.members.append(g)
            best.allowed = best.allowed & comp
            if cap[best.plan] - best.used < smallest - _EPS:
                open_bins.remove(best)
        else:
            cands = prob.cands[g]
            if strategy == 0:
                p = min(
                    cands,
                    key=lambda q: (
                        price[q] / max(h, min(cap[q], remaining.get(q, 0.0)), _EPS),
                        price[q],
                        q,
                    ),
                )
            elif strategy == 1:
                p = min(cands, key=lambda q: (price[q] / max(cap[q], _EPS), price[q], q))
            else:
                p = cands[0]
            b = _Bin(p, h, [g], comp)
            bins.append(b)
            if cap[p] - h >= smallest - _EPS:
                open_bins.append(b)
        for p in comp:
            remaining[p] -= h
    return bins


def _fill_greedy(prob: _Problem, gs: Sequence[int], constrained_first: bool) -> list[_Bin]:
    """One lot at a time: the largest group left opens the plan that its fill makes cheapest.

    Each candidate plan is filled (first fit, largest first) from the groups still waiting, and
    the plan with the lowest price per filled hour wins. Unlike FFD this sees that three 55 h
    runs fill a 7-day lot better than three 3-day lots.
    """
    hours, compat, cap, price = prob.hours, prob.compat, prob.cap, prob.price
    if constrained_first:
        order = sorted(gs, key=lambda g: (-prob.rate[g], -hours[g], len(compat[g]), g))
    else:
        order = sorted(gs, key=lambda g: (-hours[g], len(compat[g]), g))
    waiting = list(order)
    bins: list[_Bin] = []
    while waiting:
        g = waiting[0]
        smallest = min(hours[x] for x in waiting)
        best: tuple[float, float, int, list[int]] | None = None
        for p in prob.cands[g]:
            free = cap[p] - hours[g]
            chosen = [g]
            for x in waiting[1:]:
                if free < smallest - _EPS:
                    break
                if p in compat[x] and hours[x] <= free + _EPS:
                    chosen.append(x)
                    free -= hours[x]
            filled = cap[p] - free
            key = (price[p] / max(filled, _EPS), -filled, p, chosen)
            if best is None or key[:3] < best[:3]:
                best = key
        assert best is not None  # placeable groups always have a candidate plan
        _, _, p, chosen = best
        taken = set(chosen)
        waiting = [x for x in waiting if x not in taken]
        b = _Bin(p, 0.0, chosen, frozenset())
        _refresh(prob, b)
        bins.append(b)
    return bins


def _refresh(prob: _Problem, b: _Bin) -> None:
    allowed: frozenset[int] | None = None
    used = 0.0
    for g in b.members:
        allowed = prob.compat[g] if allowed is None else allowed & prob.compat[g]
        used += prob.hours[g]
    b.allowed = allowed if allowed is not None else frozenset()
    b.used = used


def _downsize(prob: _Problem, bins: list[_Bin]) -> bool:
    changed = False
    for b in bins:
        p = prob.cheapest_plan(b.allowed, b.used)
        if p is not None and prob.price[p] < prob.price[b.plan]:
            b.plan = p
            changed = True
    return changed


def _best_target(
    prob: _Problem, bins: Sequence[_Bin], g: int, exclude: _Bin, free: dict[int, float]
) -> _Bin | None:
    h = prob.hours[g]
    comp = prob.compat[g]
    best: _Bin | None = None
    best_left = math.inf
    for o in bins:
        if o is exclude or o.plan not in comp:
            continue
        left = free[id(o)] - h
        if -_EPS <= left < best_left:
            best, best_left = o, left
    return best


def _eliminate(prob: _Problem, bins: list[_Bin]) -> bool:
    """Empty a lot into the others' slack; a lot that can be emptied is pure waste."""
    changed = False
    for b in sorted(bins, key=lambda x: (-prob.price[x.plan], x.used)):
        if b not in bins:
            continue
        free = {id(o): prob.cap[o.plan] - o.used for o in bins}
        moves: list[tuple[int, _Bin]] = []
        for g in sorted(b.members, key=lambda x: -prob.hours[x]):
            target = _best_target(prob, bins, g, b, free)
            if target is None:
                break
            free[id(target)] -= prob.hours[g]
            moves.append((g, target))
        else:
            for g, target in moves:
                target.members.append(g)
                _refresh(prob, target)
            bins.remove(b)
            changed = True
    return changed


def _move_to_downsize(prob: _Problem, bins: list[_Bin]) -> bool:
    """Shed one group into another lot's slack when that lets this lot take a cheaper plan."""
    changed = False
    for b in bins:
        cheaper = [p for p in b.allowed if prob.price[p] < prob.price[b.plan]]
        if not cheaper or len(b.members) < 2:
            continue
        need = b.used - max(prob.cap[p] for p in cheaper)
        free = {id(o): prob.cap[o.plan] - o.used for o in bins}
        for g in sorted(b.members, key=lambda x: (prob.hours[x], x)):
            if prob.hours[g] < need - _EPS:
                continue
            target = _best_target(prob, bins, g, b, free)
            if target is None:
                continue
            b.members.remove(g)
            _refresh(prob, b)
            p = prob.cheapest_plan(b.allowed, b.used)
            if p is not None and prob.price[p] < prob.price[b.plan]:
                b.plan = p
                target.members.append(g)
                _refresh(prob, target)
                changed = True
                break
            b.members.append(g)
            _refresh(prob, b)
    return changed


def _repack(prob: _Problem, members: Sequence[int]) -> list[_Bin]:
    best: list[_Bin] | None = None
    for strategy, constrained in _STRATEGIES:
        trial = _start(prob, members, strategy, constrained)
        _downsize(prob, trial)
        if best is None or prob.cost(trial) < prob.cost(best):
            best = trial
    return best or []


def _merge_and_repack(prob: _Problem, bins: list[_Bin], partners: int) -> bool:
    """Pool a lot with a few others that share a plan with it and re-pack the pool.

    Covers merging two half-empty lots into one and rebalancing two lots so one can shrink.
    """
    changed = False
    order = sorted(bins, key=lambda x: (x.used / max(prob.cap[x.plan], _EPS), -prob.price[x.plan]))
    for b in order:
        if b not in bins:
            continue
        peers = [o for o in bins if o is not b and o.allowed & b.allowed]
        peers.sort(key=lambda o: (o.used - prob.cap[o.plan], o.used))
        for o in peers[:partners]:
            if o not in bins:
                continue
            pool = b.members + o.members
            # Pools already priced at their lower bound cannot improve: skip the re-pack.
            if prob.lower_bound(pool) >= prob.price[b.plan] + prob.price[o.plan]:
                continue
            trial = _repack(prob, pool)
            if prob.cost(trial) < prob.price[b.plan] + prob.price[o.plan]:
                bins.remove(b)
                bins.remove(o)
                bins.extend(trial)
                changed = True
                break
    return changed


# (how new lots are chosen, constrained groups first); strategy 3 is the lot-at-a-time fill.
_STRATEGIES = (
    (0, False),
    (1, False),
    (2, False),
    (3, False),
    (0, True),
    (1, True),
    (2, True),
    (3, True),
)


def _start(prob: _Problem, gs: Sequence[int], strategy: int, constrained: bool) -> list[_Bin]:
    if strategy == 3:
        return _fill_greedy(prob, gs, constrained)
    return _greedy(prob, gs, strategy, constrained)


def _heuristic(prob: _Problem, gs: Sequence[int]) -> list[_Bin]:
    starts = [_start(prob, gs, strategy, constrained) for strategy, constrained in _STRATEGIES]
    # Local improvement is the expensive part: polish only the two best distinct starts.
    starts.sort(key=prob.cost)
    polished: list[list[_Bin]] = []
    seen: set[int] = set()
    for start in starts:
        if prob.cost(start) not in seen and len(polished) < 2:
            seen.add(prob.cost(start))
            polished.append(start)
    best: list[_Bin] | None = None
    for bins in polished:
        for _ in range(8):
            improved = _downsize(prob, bins)
            improved |= _eliminate(prob, bins)
            improved |= _move_to_downsize(prob, bins)
            improved |= _merge_and_repack(prob, bins, partners=6)
            if not improved:
                break
        _downsize(prob, bins)
        if best is None or prob.cost(bins) < prob.cost(best):
            best = bins
    return best or []


# --------------------------------------------------------------------------- exact search


def _exact(
    prob: _Problem, gs: Sequence[int], incumbent: list[_Bin], node_limit: int
) -> tuple[list[_Bin], bool]:
    """Branch and bound over groups (largest first): put each group on an open lot or open one.

    Returns the best solution and whether the search finished (i.e. the result is optimal).
    """
    hours, compat, cap, price = prob.hours, prob.compat, prob.cap, prob.price
    order = sorted(gs, key=lambda g: (-hours[g], len(compat[g]), g))
    n = len(order)
    best_cost = prob.cost(incumbent)
    best: list[tuple[int, list[int]]] = [(b.plan, list(b.members)) for b in incumbent]
    lot_plan: list[int] = []
    lot_free: list[float] = []
    lot_members: list[list[int]] = []
    nodes = 0
    aborted = False

    def bound(i: int) -> int:
        # Groups no open lot can take need new lots: those cost at least their fractional share,
        # and at least the cheapest lot able to hold the largest of them.
        frac = 0.0
        floor = 0
        for g in order[i:]:
            h = hours[g]
            comp = compat[g]
            if any(lot_plan[k] in comp and lot_free[k] >= h - _EPS for k in range(len(lot_plan))):
                continue
            frac += prob.rate[g] * h
            floor = max(floor, prob.min_price[g])
        return max(math.ceil(frac - 1e-6), floor)

    def search(i: int, cost: int) -> None:
        nonlocal nodes, aborted, best_cost, best
        if aborted:
            return
        nodes += 1
        if nodes > node_limit:
            aborted = True
            return
        if i == n:
            if cost < best_cost:
                best_cost = cost
                best = [(p, list(m)) for p, m in zip(lot_plan, lot_members, strict=True)]
            return
        if cost + bound(i) >= best_cost:
            return
        g = order[i]
        h = hours[g]
        comp = compat[g]
        tried: set[tuple[int, float]] = set()
        for k in range(len(lot_plan)):
            # Two open lots with the same plan and the same slack have the same future.
            sig = (lot_plan[k], round(lot_free[k], 9))
            if lot_plan[k] not in comp or lot_free[k] < h - _EPS or sig in tried:
                continue
            tried.add(sig)
            lot_free[k] -= h
            lot_members[k].append(g)
            search(i + 1, cost)
            lot_members[k].pop()
            lot_free[k] += h
        for p in prob.cands[g]:
            if cost + price[p] >= best_cost:
                break
            lot_plan.append(p)
            lot_free.append(cap[p] - h)
            lot_members.append([g])
            search(i + 1, cost + price[p])
            lot_plan.pop()
            lot_free.pop()
            lot_members.pop()

    search(0, 0)
    bins = [_Bin(p, 0.0, m, frozenset()) for p, m in best]
    for b in bins:
        _refresh(prob, b)
    return bins, not aborted


def _components(prob: _Problem, gs: Sequence[int]) -> list[list[int]]:
    """Groups linked by a plan they could share; separate components never share a lot."""
    parent: dict[int, int] = {}

    def find(x: int) -> int:
        while parent.setdefault(x, x) != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for g in gs:
        plans = sorted(prob.compat[g])
        for p in plans[1:]:
            parent[find(p)] = find(plans[0])
    comps: dict[int, list[int]] = {}
    for g in gs:
        comps.setdefault(find(min(prob.compat[g])), []).append(g)
    return list(comps.values())


# --------------------------------------------------------------------------- explanations


def _why_no_plan(item: PlanItem, offers: Sequence[RentalPlanOffer]) -> str:
    label = item.label
    same_gpu = [
        o for o in offers if item.gpu is None or normalize_gpu(o.gpu) == normalize_gpu(item.gpu)
    ]
    if not same_gpu:
        return f"Item {label} needs a {item.gpu} GPU and no plan on offer has one: unplaced."
    enough_gpus = [o for o in same_gpu if o.gpus_per_lot >= item.gpus_needed]
    if not enough_gpus:
        most = max(o.gpus_per_lot for o in same_gpu)
        return (
            f"Item {label} needs {item.gpus_needed} GPUs but the largest "
            f"{item.gpu or 'GPU'} lot has {most}: unplaced (a run never spans two lots)."
        )
    need = item.memory_bytes_per_gpu or 0
    largest = max(o.gpu_memory_bytes for o in enough_gpus)
    if need > largest:
        return (
            f"Item {label} needs {_fmt_bytes(need)} per GPU but the largest "
            f"{item.gpu or 'GPU'} on offer has {_fmt_bytes(largest)}: unplaced "
            "(two lots never pool their memory)."
        )
    return (
        f"Item {label}: no single lot offers both {item.gpus_needed} GPUs and "
        f"{_fmt_bytes(need)} per GPU: unplaced."
    )


def _choose_cut(items: Sequence[PlanItem], need: float) -> list[PlanItem] | None:
    """Fewest optional items covering ``need`` hours, exploratory before useful.

    Within a tier, one item that covers the rest is preferred (the smallest such); otherwise
    the largest goes first so fewer items are lost.
    """
    chosen: list[PlanItem] = []
    rest = need
    for tier in CUT_ORDER:
        pool = sorted((i for i in items if i.tier == tier), key=lambda i: (i.machine_hours, i.key))
        while rest > _EPS and pool:
            single = next((i for i in pool if i.machine_hours >= rest - _EPS), None)
            pick = single if single is not None else pool[-1]
            chosen.append(pick)
            pool.remove(pick)
            rest -= pick.machine_hours
        if rest <= _EPS:
            return chosen
    return None


def _explain_lot(
    lot: Lot,
    items: Sequence[PlanItem],
    considered: Sequence[RentalPlanOffer],
    window_hours: float,
) -> tuple[str | None, CutOption | None]:
    """Why this lot and not a cheaper one, plus a reduced protocol that would keep the cheaper."""
    fitting = [o for o in considered if all(item_fits_plan(i, o) for i in items)]
    cheaper = [o for o in fitting if o.price < lot.plan.price]
    if not cheaper:
        return None, None
    # The nearest cheaper plan is the one that holds the most work.
    alt = max(cheaper, key=lambda o: (usable_hours(o, window_hours), -o.price))
    over = lot.hours - usable_hours(alt, window_hours)
    if over <= _EPS:
        return None, None
    currency = lot.plan.currency
    text = (
        f"{_fmt_hours(lot.hours)} h exceeds {_lot_name(alt, fitting)} by {_fmt_hours(over)} h: "
        f"{_lot_name(lot.plan, fitting)} costs {_fmt_money(lot.plan.price, currency)}"
    )
    cut = _choose_cut(items, over)
    option: CutOption | None = None
    if cut is not None:
        hours_cut = sum(i.machine_hours for i in cut)
        text += (
            f"; or cut {_describe_cut(cut)} ({_MINUS}{_fmt_hours(hours_cut)} h) and keep "
            f"{_lot_name(alt, fitting)} at {_fmt_money(alt.price, currency)}"
        )
        option = CutOption(tuple(i.key for i in cut), hours_cut, alt, lot.plan)
    return text + ".", option


def _explain_unfit_group(
    group: _Group,
    considered: Sequence[RentalPlanOffer],
    plan_index: dict[RentalPlanOffer, int],
    window_hours: float,
) -> tuple[list[str], CutOption | None]:
    compat = [o for o in considered if plan_index[o] in group.compat]
    longest = max(compat, key=lambda o: (o.duration_hours, -o.price))
    who = group.label
    lines: list[str] = []
    long_enough = [o for o in compat if o.duration_hours >= group.hours - _EPS]
    if long_enough:
        cheapest = min(long_enough, key=lambda o: (o.price, o.duration_hours))
        lines.append(
            f"Nothing fits the {_fmt_hours(window_hours)} h window: {who} needs "
            f"{_fmt_hours(group.hours)} h in one lot; {_lot_name(cheapest, compat)} is long "
            "enough, but the work must end inside the window."
        )
    else:
        lines.append(
            f"{who[0].upper() + who[1:]} needs {_fmt_hours(group.hours)} h in one lot, "
            f"{_fmt_hours(group.hours - longest.duration_hours)} h more than the longest usable "
            f"lot ({_lot_name(longest, compat)}, {_fmt_hours(longest.duration_hours)} h): "
            "a run never spans two lots."
        )
    reach = max(usable_hours(o, window_hours) for o in compat)
    cut = _choose_cut(group.items, group.hours - reach)
    option: CutOption | None = None
    if cut is not None:
        hours_cut = sum(i.machine_hours for i in cut)
        left = group.hours - hours_cut
        target = min(
            (o for o in compat if usable_hours(o, window_hours) >= left - _EPS),
            key=lambda o: (o.price, -o.duration_hours),
        )
        lines.append(
            f"To keep it, cut {_describe_cut(cut)} ({_MINUS}{_fmt_hours(hours_cut)} h) and use "
            f"{_lot_name(target, compat)} at {_fmt_money(target.price, target.currency)}."
        )
        option = CutOption(tuple(i.key for i in cut), hours_cut, target, None)
    lines.append(f"Unplaced: {', '.join(i.key for i in group.items)}.")
    return lines, option


# --------------------------------------------------------------------------- public entry


def select_lots(  # noqa: C901
    items: Sequence[PlanItem],
    window_hours: float,
    offers: Sequence[RentalPlanOffer],
    *,
    method: MethodChoice = "auto",
    reference_hours: float | None = None,
    exact_max_groups: int = EXACT_MAX_GROUPS,
    node_limit: int = EXACT_NODE_LIMIT,
) -> Selection:
    """Choose the cheapest multiset of lots serving every item, and explain the choice.

    ``reference_hours`` is an earlier calendar total (e.g. the 48 h illustrative calendar): when
    given, the explanation opens with how much the work grew or shrank from it.
    ``method`` forces the exact search or the heuristic; "auto" picks by component size.
    """
    if not math.isfinite(window_hours) or window_hours <= 0:
        raise ValueError(f"window_hours must be finite and > 0, got {window_hours!r}")
    keys = [i.key for i in items]
    dupes = sorted(k for k, n in Counter(keys).items() if n > 1)
    if dupes:
        raise ValueError(f"duplicate item keys: {', '.join(dupes)}")

    fits = [[j for j, o in enumerate(offers) if item_fits_plan(i, o)] for i in items]
    considered_idx = sorted({j for f in fits for j in f})
    considered = [offers[j] for j in considered_idx]
    currencies = sorted({o.currency for o in considered})
    if len(currencies) > 1:
        raise ValueError(
            "the plans considered mix currencies ("
            + ", ".join(currencies)
            + "); convert them to one currency before comparing lots"
        )
    all_currencies = sorted({o.currency for o in offers})
    currency = (
        currencies[0] if currencies else (all_currencies[0] if len(all_currencies) == 1 else "")
    )

    lines: list[str] = []
    if reference_hours is not None:
        total_hours = sum(i.machine_hours for i in items)
        delta = total_hours - reference_hours
        verb = "grows" if delta > _EPS else "shrinks" if delta < -_EPS else "stays"
        if verb == "stays":
            lines.append(f"The calendar of {_fmt_hours(reference_hours)} h stays the same.")
        else:
            lines.append(
                f"The calendar of {_fmt_hours(reference_hours)} h {verb} by "
                f"{_fmt_hours(abs(delta))} h to {_fmt_hours(total_hours)} h."
            )

    unplaced: list[str] = []
    problems: list[str] = []
    cut_options: list[CutOption] = []

    for item, f in zip(items, fits, strict=True):
        if not f:
            unplaced.append(item.key)
            problems.append(_why_no_plan(item, offers))

    # Groups keep the order in which their first item appears, items keep input order.
    groups_with_work = {
        i.group for i, f in zip(items, fits, strict=True) if f and i.group is not None
    }
    grouped: dict[tuple[str, str], list[PlanItem]] = {}
    for item, f in zip(items, fits, strict=True):
        if f:
            gid = ("group", item.group) if item.group is not None else ("item", item.key)
            grouped.setdefault(gid, []).append(item)
        elif item.group is not None and item.group in groups_with_work:
            problems.append(
                f"The rest of group {item.group} is still planned without item {item.label}."
            )

    plan_index = {o: k for k, o in enumerate(considered)}
    position = {j: k for k, j in enumerate(considered_idx)}
    fits_by_key = {
        i.key: frozenset(position[j] for j in f) for i, f in zip(items, fits, strict=True) if f
    }
    placeable: list[_Group] = []
    for (kind, gname), members in grouped.items():
        label = f"group {gname}" if kind == "group" else f"item {members[0].label}"
        compat = frozenset.intersection(*(fits_by_key[i.key] for i in members))
        hours = sum(i.machine_hours for i in members)
        group = _Group(label, tuple(members), hours, compat)
        if not compat:
            problems.append(
                f"{label[0].upper() + label[1:]}: its items need different kinds of lot "
                "(GPU model, GPU count or memory), but dependent items must share one lot. "
                "Unplaced: " + ", ".join(i.key for i in members) + "."
            )
            unplaced.extend(i.key for i in members)
            continue
        if not any(usable_hours(considered[p], window_hours) >= hours - _EPS for p in compat):
            unfit_lines, unfit_cut = _explain_unfit_group(
                group, considered, plan_index, window_hours
            )
            problems.extend(unfit_lines)
            if unfit_cut is not None:
                cut_options.append(unfit_cut)
            unplaced.extend(i.key for i in members)
            continue
        placeable.append(group)

    # Dominated plans are removed from the search only; explanations still see every plan.
    kept = _prune_dominated(considered, window_hours)
    remap = {old: new for new, old in enumerate(kept)}
    search_groups = [
        _Group(g.label, g.items, g.hours, frozenset(remap[p] for p in g.compat if p in remap))
        for g in placeable
    ]
    prob = _Problem([considered[k] for k in kept], window_hours, search_groups)

    all_bins: list[_Bin] = []
    exact_everywhere = True
    lower = 0
    comps = _components(prob, range(len(search_groups)))
    for comp in comps:
        use_exact = method == "exact" or (method == "auto" and len(comp) <= exact_max_groups)
        bins = _heuristic(prob, comp)
        proven = False
        if use_exact:
            bins, proven = _exact(prob, comp, bins, node_limit)
        if proven:
            lower += prob.cost(bins)
        else:
            exact_everywhere = False
            lower += prob.lower_bound(comp)
        all_bins.extend(bins)

    first_pos = {k: n for n, k in enumerate(keys)}
    lots: list[Lot] = []
    for b in all_bins:
        members = [it for g in b.members for it in search_groups[g].items]
        members.sort(key=lambda i: first_pos[i.key])
        lots.append(
            Lot(
                prob.plans[b.plan],
                tuple(i.key for i in members),
                sum(prob.hours[g] for g in b.members),
            )
        )
    lots.sort(key=lambda lot: first_pos[lot.item_keys[0]])
    total = sum((lot.plan.price for lot in lots), Decimal(0))
    result_method: Method = "exact" if exact_everywhere else "heuristic"
    lower_bound = total if exact_everywhere else Decimal(lower).scaleb(-prob.scale)

    unplaced_set = set(unplaced)
    unplaced_sorted = tuple(k for k in keys if k in unplaced_set)
    feasible = not unplaced_sorted

    if not lots:
        lines.append("No lot is bought." if items else "Nothing to place: no items.")
    else:
        counts: dict[RentalPlanOffer, int] = {}
        for lot in lots:
            counts[lot.plan] = counts.get(lot.plan, 0) + 1
        parts = [
            f"{n} \u00d7 {_plan_title(p)} ({_duration_label(p)}, "
            f"{_fmt_money(p.price, p.currency)} per lot)"
            for p, n in counts.items()
        ]
        hours_all = sum(lot.hours for lot in lots)
        lines.append(
            f"Cheapest choice: {_join(parts)} = {_fmt_money(total, currency)} for "
            f"{_fmt_hours(hours_all)} h of work."
        )
        lines.append("A lot is priced per lot: its price covers its duration and all of its GPUs.")
    if placeable:
        if exact_everywhere:
            lines.append(
                f"Exact search (branch and bound over {len(placeable)} independent "
                f"group{'s' if len(placeable) != 1 else ''}): no cheaper set of lots exists."
            )
        else:
            lines.append(
                f"Heuristic (first-fit decreasing, cost-per-hour lot choice, then local "
                f"improvement) over {len(placeable)} groups: not proven optimal; a proven "
                f"lower bound is {_fmt_money(lower_bound, currency)}."
            )
    if len(lots) > 1:
        lines.append(
            f"The {len(lots)} lots serve independent groups in parallel; a second lot never "
            "shortens one run nor pools its memory with another lot."
        )
    if any(lot.plan.duration_hours > window_hours + _EPS for lot in lots):
        lines.append(
            f"Some lots last longer than the {_fmt_hours(window_hours)} h window: only the "
            "window's hours are used on them."
        )

    by_key = {i.key: i for i in items}
    detail_limit = 20
    explained = 0
    for lot in lots:
        text, option = _explain_lot(
            lot, [by_key[k] for k in lot.item_keys], considered, window_hours
        )
        if text is None:
            continue
        if option is not None:
            cut_options.append(option)
        explained += 1
        if explained <= detail_limit:
            lines.append(text)
    if explained > detail_limit:
        lines.append(f"\u2026and {explained - detail_limit} more lots could shrink the same way.")

    lines.extend(problems)
    if not feasible:
        lines.append(
            f"Not feasible: {len(unplaced_sorted)} item"
            f"{'s' if len(unplaced_sorted) != 1 else ''} unplaced ({', '.join(unplaced_sorted)})."
        )

    return Selection(
        lots=tuple(lots),
        total=total,
        currency=currency,
        feasible=feasible,
        unplaced=unplaced_sorted,
        explanation=tuple(lines),
        method=result_method,
        lower_bound=lower_bound,
        cut_options=tuple(cut_options),
    )
