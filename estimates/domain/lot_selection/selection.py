"""select_lots: the cheapest multiset of rental lots that serves every planned item
(docs/domain.md §9), and the cut proposed when the window or the plans cannot hold them all."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from decimal import Decimal

from .exact import independent_components, pack_exactly
from .explanation import (
    explain_unfit_group,
    lot_detail_lines,
    reference_lines,
    summary_lines,
    why_no_plan,
)
from .heuristic import pack_heuristically
from .offers import (
    EPS,
    EXACT_MAX_GROUPS,
    EXACT_NODE_LIMIT,
    Lot,
    MethodChoice,
    PlanItem,
    RentalPlanOffer,
    Selection,
    item_fits_plan,
    usable_hours,
)
from .problem import Bin, Group, Packed, Placing, Problem, prune_dominated


def select_lots(
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
    _check_selection_input(items, window_hours)
    fits = [[j for j, o in enumerate(offers) if item_fits_plan(i, o)] for i in items]
    considered_idx = sorted({j for f in fits for j in f})
    considered = [offers[j] for j in considered_idx]
    currency = _selection_currency(offers, considered)
    lines = reference_lines(items, reference_hours)
    placing = _placing(items, fits, offers, considered, considered_idx, window_hours)
    packed = _pack(
        items, considered, window_hours, placing.placeable, method, exact_max_groups, node_limit
    )
    keys = [i.key for i in items]
    unplaced_set = set(placing.unplaced)
    unplaced = tuple(k for k in keys if k in unplaced_set)
    lines += summary_lines(items, packed, len(placing.placeable), currency, window_hours)
    lines += lot_detail_lines(items, packed.lots, considered, window_hours, placing.cut_options)
    lines.extend(placing.problems)
    if unplaced:
        lines.append(
            f"Not feasible: {len(unplaced)} item"
            f"{'s' if len(unplaced) != 1 else ''} unplaced ({', '.join(unplaced)})."
        )
    return Selection(
        lots=tuple(packed.lots),
        total=packed.total,
        currency=currency,
        feasible=not unplaced,
        unplaced=unplaced,
        explanation=tuple(lines),
        method="exact" if packed.exact else "heuristic",
        lower_bound=packed.lower_bound,
        cut_options=tuple(placing.cut_options),
    )


def _check_selection_input(items: Sequence[PlanItem], window_hours: float) -> None:
    if not math.isfinite(window_hours) or window_hours <= 0:
        raise ValueError(f"window_hours must be finite and > 0, got {window_hours!r}")
    dupes = sorted(k for k, n in Counter(i.key for i in items).items() if n > 1)
    if dupes:
        raise ValueError(f"duplicate item keys: {', '.join(dupes)}")


def _selection_currency(
    offers: Sequence[RentalPlanOffer], considered: Sequence[RentalPlanOffer]
) -> str:
    """The one currency of the plans considered (else of all plans, if one); mixing raises."""
    currencies = sorted({o.currency for o in considered})
    if len(currencies) > 1:
        raise ValueError(
            "the plans considered mix currencies ("
            + ", ".join(currencies)
            + "); convert them to one currency before comparing lots"
        )
    all_currencies = sorted({o.currency for o in offers})
    if currencies:
        return currencies[0]
    return all_currencies[0] if len(all_currencies) == 1 else ""


def _grouped(
    items: Sequence[PlanItem],
    fits: Sequence[Sequence[int]],
    offers: Sequence[RentalPlanOffer],
    placing: Placing,
) -> dict[tuple[str, str], list[PlanItem]]:
    """Items that some plan fits, by group (or alone); the others are unplaced with a reason.

    Groups keep the order in which their first item appears, items keep input order.
    """
    for item, f in zip(items, fits, strict=True):
        if not f:
            placing.unplaced.append(item.key)
            placing.problems.append(why_no_plan(item, offers))
    groups_with_work = {
        i.group for i, f in zip(items, fits, strict=True) if f and i.group is not None
    }
    grouped: dict[tuple[str, str], list[PlanItem]] = {}
    for item, f in zip(items, fits, strict=True):
        if f:
            gid = ("group", item.group) if item.group is not None else ("item", item.key)
            grouped.setdefault(gid, []).append(item)
        elif item.group is not None and item.group in groups_with_work:
            placing.problems.append(
                f"The rest of group {item.group} is still planned without item {item.label}."
            )
    return grouped


def _place_group(
    placing: Placing,
    group: Group,
    considered: Sequence[RentalPlanOffer],
    plan_index: dict[RentalPlanOffer, int],
    window_hours: float,
) -> None:
    """The group is placeable, or unplaced with why: its items share no kind of lot, or no lot
    it could use holds its hours within the window (then the cut that would let one)."""
    members = group.items
    if not group.compat:
        label = group.label
        placing.problems.append(
            f"{label[0].upper() + label[1:]}: its items need different kinds of lot "
            "(GPU model, GPU count or memory), but dependent items must share one lot. "
            "Unplaced: " + ", ".join(i.key for i in members) + "."
        )
        placing.unplaced.extend(i.key for i in members)
        return
    if not any(
        usable_hours(considered[p], window_hours) >= group.hours - EPS for p in group.compat
    ):
        unfit_lines, unfit_cut = explain_unfit_group(group, considered, plan_index, window_hours)
        placing.problems.extend(unfit_lines)
        if unfit_cut is not None:
            placing.cut_options.append(unfit_cut)
        placing.unplaced.extend(i.key for i in members)
        return
    placing.placeable.append(group)


def _placing(
    items: Sequence[PlanItem],
    fits: Sequence[Sequence[int]],
    offers: Sequence[RentalPlanOffer],
    considered: Sequence[RentalPlanOffer],
    considered_idx: Sequence[int],
    window_hours: float,
) -> Placing:
    """Each group with the plans that can host all its items and its hours, or why not."""
    placing = Placing()
    grouped = _grouped(items, fits, offers, placing)
    plan_index = {o: k for k, o in enumerate(considered)}
    position = {j: k for k, j in enumerate(considered_idx)}
    fits_by_key = {
        i.key: frozenset(position[j] for j in f) for i, f in zip(items, fits, strict=True) if f
    }
    for (kind, gname), members in grouped.items():
        label = f"group {gname}" if kind == "group" else f"item {members[0].label}"
        # A group's items share one lot: only the plans every one of them fits.
        compat = frozenset.intersection(*(fits_by_key[i.key] for i in members))
        hours = sum(i.machine_hours for i in members)
        _place_group(
            placing,
            Group(label, tuple(members), hours, compat),
            considered,
            plan_index,
            window_hours,
        )
    return placing


def _pack(
    items: Sequence[PlanItem],
    considered: Sequence[RentalPlanOffer],
    window_hours: float,
    placeable: Sequence[Group],
    method: MethodChoice,
    exact_max_groups: int,
    node_limit: int,
) -> Packed:
    """Search each independent component (exactly when small enough), then build the lots."""
    # Dominated plans are removed from the search only; explanations still see every plan.
    kept = prune_dominated(considered, window_hours)
    remap = {old: new for new, old in enumerate(kept)}
    search_groups = [
        Group(g.label, g.items, g.hours, frozenset(remap[p] for p in g.compat if p in remap))
        for g in placeable
    ]
    prob = Problem([considered[k] for k in kept], window_hours, search_groups)
    all_bins: list[Bin] = []
    exact_everywhere = True
    lower = 0
    for comp in independent_components(prob, range(len(search_groups))):
        use_exact = method == "exact" or (method == "auto" and len(comp) <= exact_max_groups)
        bins = pack_heuristically(prob, comp)
        proven = False
        if use_exact:
            bins, proven = pack_exactly(prob, comp, bins, node_limit)
        if proven:
            lower += prob.cost(bins)
        else:
            exact_everywhere = False
            lower += prob.lower_bound(comp)
        all_bins.extend(bins)
    lots = _lots_of(items, prob, search_groups, all_bins)
    total = sum((lot.plan.price for lot in lots), Decimal(0))
    lower_bound = total if exact_everywhere else Decimal(lower).scaleb(-prob.scale)
    return Packed(lots, total, exact_everywhere, lower_bound)


def _lots_of(
    items: Sequence[PlanItem],
    prob: Problem,
    search_groups: Sequence[Group],
    bins: Sequence[Bin],
) -> list[Lot]:
    """The bins as lots, their items and the lots themselves in the items' input order."""
    first_pos = {i.key: n for n, i in enumerate(items)}
    lots: list[Lot] = []
    for b in bins:
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
    return lots
