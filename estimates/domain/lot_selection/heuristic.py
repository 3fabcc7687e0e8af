"""The heuristic packing for components too large to search exactly (docs/domain.md §9):
first-fit decreasing with a cost-per-hour-aware choice of new lots, then local improvement
(downsizing, emptying, merging, moving and re-packing lots)."""

from __future__ import annotations

import math
from collections.abc import Sequence

from .offers import EPS
from .problem import Bin, Problem


def _best_open_bin(prob: Problem, open_bins: list[Bin], g: int) -> Bin | None:
    """The open lot group `g` fits best (least left over), or None."""
    h, comp = prob.hours[g], prob.compat[g]
    best: Bin | None = None
    best_left = math.inf
    for b in open_bins:
        if b.plan in comp:
            left = prob.cap[b.plan] - b.used - h
            if -EPS <= left < best_left:
                best, best_left = b, left
    return best


def _new_lot_plan(prob: Problem, g: int, strategy: int, remaining: dict[int, float]) -> int:
    """The plan of the lot opened for group `g` (see `_greedy`'s strategies)."""
    h, cap, price, cands = prob.hours[g], prob.cap, prob.price, prob.cands[g]
    if strategy == 0:
        return min(
            cands,
            key=lambda q: (price[q] / max(h, min(cap[q], remaining.get(q, 0.0)), EPS), price[q], q),
        )
    if strategy == 1:
        return min(cands, key=lambda q: (price[q] / max(cap[q], EPS), price[q], q))
    return cands[0]


def _greedy(
    prob: Problem, gs: Sequence[int], strategy: int, constrained_first: bool = False
) -> list[Bin]:
    """First-fit decreasing (best fit among open lots); ``strategy`` picks how new lots are chosen.

    0: lowest price per hour the remaining compatible work can actually fill,
    1: lowest price per usable hour, 2: lowest price.
    ``constrained_first`` places groups that only expensive lots can host before the flexible
    ones, so flexible work fills the slack of expensive lots instead of crowding out the work
    that has nowhere else to go.
    """
    hours, compat, cap = prob.hours, prob.compat, prob.cap
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
    bins: list[Bin] = []
    # Lots too full for even the smallest group leave the scan: keeps this linear-ish.
    open_bins: list[Bin] = []
    for g in order:
        h, comp = hours[g], compat[g]
        best = _best_open_bin(prob, open_bins, g)
        if best is not None:
            best.used += h
            best.members.append(g)
            best.allowed = best.allowed & comp
            if cap[best.plan] - best.used < smallest - EPS:
                open_bins.remove(best)
        else:
            p = _new_lot_plan(prob, g, strategy, remaining)
            b = Bin(p, h, [g], comp)
            bins.append(b)
            if cap[p] - h >= smallest - EPS:
                open_bins.append(b)
        for p in comp:
            remaining[p] -= h
    return bins


def _fill_greedy(prob: Problem, gs: Sequence[int], constrained_first: bool) -> list[Bin]:
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
    bins: list[Bin] = []
    while waiting:
        g = waiting[0]
        smallest = min(hours[x] for x in waiting)
        best: tuple[float, float, int, list[int]] | None = None
        for p in prob.cands[g]:
            free = cap[p] - hours[g]
            chosen = [g]
            for x in waiting[1:]:
                if free < smallest - EPS:
                    break
                if p in compat[x] and hours[x] <= free + EPS:
                    chosen.append(x)
                    free -= hours[x]
            filled = cap[p] - free
            key = (price[p] / max(filled, EPS), -filled, p, chosen)
            if best is None or key[:3] < best[:3]:
                best = key
        assert best is not None  # placeable groups always have a candidate plan
        _, _, p, chosen = best
        taken = set(chosen)
        waiting = [x for x in waiting if x not in taken]
        b = Bin(p, 0.0, chosen, frozenset())
        refresh_bin(prob, b)
        bins.append(b)
    return bins


def refresh_bin(prob: Problem, b: Bin) -> None:
    allowed: frozenset[int] | None = None
    used = 0.0
    for g in b.members:
        allowed = prob.compat[g] if allowed is None else allowed & prob.compat[g]
        used += prob.hours[g]
    b.allowed = allowed if allowed is not None else frozenset()
    b.used = used


def _downsize(prob: Problem, bins: list[Bin]) -> bool:
    changed = False
    for b in bins:
        p = prob.cheapest_plan(b.allowed, b.used)
        if p is not None and prob.price[p] < prob.price[b.plan]:
            b.plan = p
            changed = True
    return changed


def _best_target(
    prob: Problem, bins: Sequence[Bin], g: int, exclude: Bin, free: dict[int, float]
) -> Bin | None:
    h = prob.hours[g]
    comp = prob.compat[g]
    best: Bin | None = None
    best_left = math.inf
    for o in bins:
        if o is exclude or o.plan not in comp:
            continue
        left = free[id(o)] - h
        if -EPS <= left < best_left:
            best, best_left = o, left
    return best


def _eliminate(prob: Problem, bins: list[Bin]) -> bool:
    """Empty a lot into the others' slack; a lot that can be emptied is pure waste."""
    changed = False
    for b in sorted(bins, key=lambda x: (-prob.price[x.plan], x.used)):
        if b not in bins:
            continue
        free = {id(o): prob.cap[o.plan] - o.used for o in bins}
        moves: list[tuple[int, Bin]] = []
        for g in sorted(b.members, key=lambda x: -prob.hours[x]):
            target = _best_target(prob, bins, g, b, free)
            if target is None:
                break
            free[id(target)] -= prob.hours[g]
            moves.append((g, target))
        else:
            for g, target in moves:
                target.members.append(g)
                refresh_bin(prob, target)
            bins.remove(b)
            changed = True
    return changed


def _move_to_downsize(prob: Problem, bins: list[Bin]) -> bool:
    """Shed one group into another lot's slack when that lets this lot take a cheaper plan."""
    changed = False
    for b in bins:
        cheaper = [p for p in b.allowed if prob.price[p] < prob.price[b.plan]]
        if not cheaper or len(b.members) < 2:
            continue
        need = b.used - max(prob.cap[p] for p in cheaper)
        free = {id(o): prob.cap[o.plan] - o.used for o in bins}
        for g in sorted(b.members, key=lambda x: (prob.hours[x], x)):
            if prob.hours[g] < need - EPS:
                continue
            target = _best_target(prob, bins, g, b, free)
            if target is None:
                continue
            b.members.remove(g)
            refresh_bin(prob, b)
            p = prob.cheapest_plan(b.allowed, b.used)
            if p is not None and prob.price[p] < prob.price[b.plan]:
                b.plan = p
                target.members.append(g)
                refresh_bin(prob, target)
                changed = True
                break
            b.members.append(g)
            refresh_bin(prob, b)
    return changed


def _repack(prob: Problem, members: Sequence[int]) -> list[Bin]:
    best: list[Bin] | None = None
    for strategy, constrained in _STRATEGIES:
        trial = _start(prob, members, strategy, constrained)
        _downsize(prob, trial)
        if best is None or prob.cost(trial) < prob.cost(best):
            best = trial
    return best or []


def _merge_and_repack(prob: Problem, bins: list[Bin], partners: int) -> bool:
    """Pool a lot with a few others that share a plan with it and re-pack the pool.

    Covers merging two half-empty lots into one and rebalancing two lots so one can shrink.
    """
    changed = False
    order = sorted(bins, key=lambda x: (x.used / max(prob.cap[x.plan], EPS), -prob.price[x.plan]))
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


def _start(prob: Problem, gs: Sequence[int], strategy: int, constrained: bool) -> list[Bin]:
    if strategy == 3:
        return _fill_greedy(prob, gs, constrained)
    return _greedy(prob, gs, strategy, constrained)


def pack_heuristically(prob: Problem, gs: Sequence[int]) -> list[Bin]:
    starts = [_start(prob, gs, strategy, constrained) for strategy, constrained in _STRATEGIES]
    # Local improvement is the expensive part: polish only the two best distinct starts.
    starts.sort(key=prob.cost)
    polished: list[list[Bin]] = []
    seen: set[int] = set()
    for start in starts:
        if prob.cost(start) not in seen and len(polished) < 2:
            seen.add(prob.cost(start))
            polished.append(start)
    best: list[Bin] | None = None
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
