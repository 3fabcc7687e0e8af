"""The exact packing (docs/domain.md §9): independent components, each with at most
EXACT_MAX_GROUPS groups solved by branch and bound over its groups."""

from __future__ import annotations

import math
from collections.abc import Sequence

from .heuristic import refresh_bin
from .offers import EPS
from .problem import Bin, Problem


class _Search:
    """The branch and bound's state: the lots open on the current path and the best found."""

    def __init__(self, prob: Problem, order: list[int], incumbent: list[Bin], limit: int) -> None:
        self.prob, self.order, self.limit = prob, order, limit
        self.best_cost = prob.cost(incumbent)
        self.best: list[tuple[int, list[int]]] = [(b.plan, list(b.members)) for b in incumbent]
        self.lot_plan: list[int] = []
        self.lot_free: list[float] = []
        self.lot_members: list[list[int]] = []
        self.nodes = 0
        self.aborted = False

    def fits_open_lot(self, g: int) -> bool:
        h, comp = self.prob.hours[g], self.prob.compat[g]
        return any(
            plan in comp and free >= h - EPS
            for plan, free in zip(self.lot_plan, self.lot_free, strict=True)
        )

    def bound(self, i: int) -> int:
        # Groups no open lot can take need new lots: those cost at least their fractional share,
        # and at least the cheapest lot able to hold the largest of them.
        frac = 0.0
        floor = 0
        for g in self.order[i:]:
            if self.fits_open_lot(g):
                continue
            frac += self.prob.rate[g] * self.prob.hours[g]
            floor = max(floor, self.prob.min_price[g])
        return max(math.ceil(frac - 1e-6), floor)

    def search(self, i: int, cost: int) -> None:
        if self.aborted:
            return
        self.nodes += 1
        if self.nodes > self.limit:
            self.aborted = True
            return
        if i == len(self.order):
            if cost < self.best_cost:
                self.best_cost = cost
                self.best = [
                    (p, list(m)) for p, m in zip(self.lot_plan, self.lot_members, strict=True)
                ]
            return
        if cost + self.bound(i) >= self.best_cost:
            return
        self.into_open_lots(i, cost)
        self.into_new_lots(i, cost)

    def into_open_lots(self, i: int, cost: int) -> None:
        g = self.order[i]
        h, comp = self.prob.hours[g], self.prob.compat[g]
        tried: set[tuple[int, float]] = set()
        for k, plan in enumerate(self.lot_plan):
            # Two open lots with the same plan and the same slack have the same future.
            sig = (plan, round(self.lot_free[k], 9))
            if plan not in comp or self.lot_free[k] < h - EPS or sig in tried:
                continue
            tried.add(sig)
            self.lot_free[k] -= h
            self.lot_members[k].append(g)
            self.search(i + 1, cost)
            self.lot_members[k].pop()
            self.lot_free[k] += h

    def into_new_lots(self, i: int, cost: int) -> None:
        g = self.order[i]
        h = self.prob.hours[g]
        for p in self.prob.cands[g]:
            if cost + self.prob.price[p] >= self.best_cost:
                break
            self.lot_plan.append(p)
            self.lot_free.append(self.prob.cap[p] - h)
            self.lot_members.append([g])
            self.search(i + 1, cost + self.prob.price[p])
            self.lot_plan.pop()
            self.lot_free.pop()
            self.lot_members.pop()


def pack_exactly(
    prob: Problem, gs: Sequence[int], incumbent: list[Bin], node_limit: int
) -> tuple[list[Bin], bool]:
    """Branch and bound over groups (largest first): put each group on an open lot or open one.

    Returns the best solution and whether the search finished (i.e. the result is optimal).
    """
    order = sorted(gs, key=lambda g: (-prob.hours[g], len(prob.compat[g]), g))
    state = _Search(prob, order, incumbent, node_limit)
    state.search(0, 0)
    bins = [Bin(p, 0.0, m, frozenset()) for p, m in state.best]
    for b in bins:
        refresh_bin(prob, b)
    return bins, not state.aborted


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
