"""The exact packing (docs/domain.md §9): independent components, each with at most
EXACT_MAX_GROUPS groups solved by branch and bound over its groups."""

from __future__ import annotations

import math
from collections.abc import Sequence

from .heuristic import refresh_bin
from .offers import EPS
from .problem import Bin, Problem


def pack_exactly(
    prob: Problem, gs: Sequence[int], incumbent: list[Bin], node_limit: int
) -> tuple[list[Bin], bool]:
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
            if any(lot_plan[k] in comp and lot_free[k] >= h - EPS for k in range(len(lot_plan))):
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
            if lot_plan[k] not in comp or lot_free[k] < h - EPS or sig in tried:
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
    bins = [Bin(p, 0.0, m, frozenset()) for p, m in best]
    for b in bins:
        refresh_bin(prob, b)
    return bins, not aborted


def independent_components(prob: Problem, gs: Sequence[int]) -> list[list[int]]:
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
