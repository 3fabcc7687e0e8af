"""The closing report's plan: the frozen baseline as committed (items, stop rules, lots and their
durations) and each amendment's changed fields in words."""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Any

from campaigns.domain.formatting import format_hours_fixed, format_money
from campaigns.models import Campaign


def changes(before: Mapping[str, Any], after: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Each amended field with its old and new value, ``old → new`` in words ("—": none)."""

    def shown(value: Any) -> str:
        if value is None or value == "" or value == {}:
            return "—"
        return json.dumps(value, sort_keys=True) if isinstance(value, dict | list) else str(value)

    return [
        {
            "field": f,
            "before": before.get(f),
            "after": after.get(f),
            "text": f"{f}: {shown(before.get(f))} → {shown(after.get(f))}",
        }
        for f in sorted(set(before) | set(after))
        if before.get(f) != after.get(f)
    ]


def lot_hours(campaign: Campaign) -> list[str]:
    """Each reserved lot's duration, in the order the baseline froze the lots (by id). Lots are
    frozen with the plan, so their rows still say what was reserved (one query)."""
    return [
        str(hours)
        for hours in campaign.lots.order_by("id").values_list("plan__duration_hours", flat=True)
    ]


def plan_section(
    snapshot: dict[str, Any],
    committed: bool,
    hours: dict[str, Any],
    lot_hours: Sequence[str] = (),
) -> dict[str, Any]:
    frozen = snapshot.get("lots", [])
    durations: list[str | None] = [None] * len(frozen)
    for index, hours_of_lot in enumerate(lot_hours[: len(frozen)]):
        durations[index] = hours_of_lot
    # The Gantt draws each lot as long as it lasts; a baseline frozen before lots carried their
    # duration gets it from the lot's row.
    lots = [
        {**lot, "duration_hours": lot.get("duration_hours") or hours_}
        for lot, hours_ in zip(frozen, durations, strict=True)
    ]
    totals: dict[str, Decimal] = defaultdict(Decimal)
    for lot in lots:
        totals[lot["currency"]] += Decimal(lot["total"])
    return {
        "committed": committed,
        "note": None
        if committed
        else "The plan was never committed: this is the current draft, not a frozen baseline.",
        "title": snapshot.get("title"),
        "window_hours": format_hours_fixed(Decimal(snapshot["window_hours"])),
        "budget": snapshot.get("budget"),
        "currency": snapshot.get("currency"),
        "reserved_machine_hours": format_hours_fixed(
            Decimal(snapshot.get("reserved_machine_hours", "0"))
        ),
        "planned_calendar_hours": hours["totals"]["planned_calendar_hours"],
        "items": [
            {
                "name": i["name"],
                "role": i["role"],
                "tier": i["tier"],
                "planned_hours": i["planned_hours"],
                "prep_hours": i["prep_hours"],
            }
            for i in snapshot.get("items", [])
        ],
        "stop_rules": snapshot.get("stop_rules", []),
        "lots": lots,
        "lots_total": [
            {"currency": cur, "amount": format_money(amount)} for cur, amount in totals.items()
        ],
    }
