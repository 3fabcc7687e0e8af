"""The sentences a selection explains itself with (docs/domain.md §9): why a lot was bought,
why an item fits no plan, what a cut would drop, the summary and the method used. Money is
shown with its currency, never converted."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from decimal import ROUND_HALF_UP, Decimal

from campaigns.domain.formatting import format_hours
from catalog.domain.gpu_names import normalize_gpu

from .offers import (
    CENT,
    CUT_ORDER,
    EPS,
    MINUS,
    CutOption,
    Lot,
    PlanItem,
    RentalPlanOffer,
    item_fits_plan,
    usable_hours,
)
from .problem import Group, Packed, choose_cut

_fmt_hours = format_hours


def _fmt_money(amount: Decimal, currency: str) -> str:
    # Exact prices with more than two decimals are shown as they are rather than rounded away.
    # Beyond 24 integer digits a quantize to cents would exceed Decimal's 28-digit context
    # (InvalidOperation): such an amount is shown as it is.
    if not amount.is_finite() or amount.adjusted() >= 24:
        return f"{amount} {currency}"
    shown = (
        amount.quantize(CENT, rounding=ROUND_HALF_UP) if amount == amount.quantize(CENT) else amount
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


def why_no_plan(item: PlanItem, offers: Sequence[RentalPlanOffer]) -> str:
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
    if over <= EPS:
        return None, None
    currency = lot.plan.currency
    text = (
        f"{_fmt_hours(lot.hours)} h exceeds {_lot_name(alt, fitting)} by {_fmt_hours(over)} h: "
        f"{_lot_name(lot.plan, fitting)} costs {_fmt_money(lot.plan.price, currency)}"
    )
    cut = choose_cut(items, over)
    option: CutOption | None = None
    if cut is not None:
        hours_cut = sum(i.machine_hours for i in cut)
        text += (
            f"; or cut {_describe_cut(cut)} ({MINUS}{_fmt_hours(hours_cut)} h) and keep "
            f"{_lot_name(alt, fitting)} at {_fmt_money(alt.price, currency)}"
        )
        option = CutOption(tuple(i.key for i in cut), hours_cut, alt, lot.plan)
    return text + ".", option


def explain_unfit_group(
    group: Group,
    considered: Sequence[RentalPlanOffer],
    plan_index: dict[RentalPlanOffer, int],
    window_hours: float,
) -> tuple[list[str], CutOption | None]:
    compat = [o for o in considered if plan_index[o] in group.compat]
    longest = max(compat, key=lambda o: (o.duration_hours, -o.price))
    who = group.label
    lines: list[str] = []
    long_enough = [o for o in compat if o.duration_hours >= group.hours - EPS]
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
    cut = choose_cut(group.items, group.hours - reach)
    option: CutOption | None = None
    if cut is not None:
        hours_cut = sum(i.machine_hours for i in cut)
        left = group.hours - hours_cut
        target = min(
            (o for o in compat if usable_hours(o, window_hours) >= left - EPS),
            key=lambda o: (o.price, -o.duration_hours),
        )
        lines.append(
            f"To keep it, cut {_describe_cut(cut)} ({MINUS}{_fmt_hours(hours_cut)} h) and use "
            f"{_lot_name(target, compat)} at {_fmt_money(target.price, target.currency)}."
        )
        option = CutOption(tuple(i.key for i in cut), hours_cut, target, None)
    lines.append(f"Unplaced: {', '.join(i.key for i in group.items)}.")
    return lines, option


def reference_lines(items: Sequence[PlanItem], reference_hours: float | None) -> list[str]:
    if reference_hours is None:
        return []
    total_hours = sum(i.machine_hours for i in items)
    delta = total_hours - reference_hours
    verb = "grows" if delta > EPS else "shrinks" if delta < -EPS else "stays"
    if verb == "stays":
        return [f"The machine time of {_fmt_hours(reference_hours)} h stays the same."]
    return [
        f"The machine time of {_fmt_hours(reference_hours)} h {verb} by "
        f"{_fmt_hours(abs(delta))} h to {_fmt_hours(total_hours)} h."
    ]


def summary_lines(
    items: Sequence[PlanItem], packed: Packed, groups: int, currency: str, window_hours: float
) -> list[str]:
    """What is bought, for how much, how sure the search is, and what the lots mean."""
    lots = packed.lots
    lines: list[str] = []
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
            f"Cheapest choice: {_join(parts)} = {_fmt_money(packed.total, currency)} for "
            f"{_fmt_hours(hours_all)} h of machine time."
        )
        lines.append("A lot is priced per lot: its price covers its duration and all of its GPUs.")
    if groups:
        lines.append(_method_line(packed, groups, currency))
    if len(lots) > 1:
        lines.append(
            f"The {len(lots)} lots serve independent groups in parallel; a second lot never "
            "shortens one run nor pools its memory with another lot."
        )
    if any(lot.plan.duration_hours > window_hours + EPS for lot in lots):
        lines.append(
            f"Some lots last longer than the {_fmt_hours(window_hours)} h window: only the "
            "window's hours are used on them."
        )
    return lines


def _method_line(packed: Packed, groups: int, currency: str) -> str:
    if packed.exact:
        return (
            f"Exact search (branch and bound over {groups} independent "
            f"group{'s' if groups != 1 else ''}): no cheaper set of lots exists."
        )
    return (
        f"Heuristic (first-fit decreasing, cost-per-hour lot choice, then local "
        f"improvement) over {groups} groups: not proven optimal; a proven "
        f"lower bound is {_fmt_money(packed.lower_bound, currency)}."
    )


def lot_detail_lines(
    items: Sequence[PlanItem],
    lots: Sequence[Lot],
    considered: Sequence[RentalPlanOffer],
    window_hours: float,
    cut_options: list[CutOption],
) -> list[str]:
    """How each lot could shrink (the first 20 said), collecting the cut options."""
    by_key = {i.key: i for i in items}
    detail_limit = 20
    explained = 0
    lines: list[str] = []
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
    return lines
