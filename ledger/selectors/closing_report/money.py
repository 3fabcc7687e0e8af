"""The closing report's money: the ledger summed per currency against the frozen budget, and the
cost per accepted deliverable stated in words (docs/domain.md §12: amounts are exact decimals,
never summed across currencies)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Any

from campaigns.domain.formatting import format_money
from campaigns.models import Campaign
from ledger.domain.cost_per_deliverable import DeliverableFacts, Entry, LedgerSummary, summarize
from ledger.models import Deliverable, EntryKind
from ledger.selectors.closing_report.common import moment

# The ledger summary's totals the report shows; its ratio fields go to `cost_per_accepted`.
_TOTAL_KEYS = ("currency", "rental", "included", "external", "incurred")


def _deliverable_facts(deliverables: list[Deliverable]) -> list[DeliverableFacts]:
    """What the cost per deliverable needs of each one; an accepted one carries no reasons."""
    return [
        DeliverableFacts(
            d.corpus_name,
            d.corpus_revision,
            d.accepted,
            () if d.accepted else tuple(d.rejection_reasons or ()),
        )
        for d in deliverables
    ]


def _entries_by_currency(entries: Sequence[Mapping[str, Any]]) -> dict[str, list[Entry]]:
    """The entries grouped by currency, each group in the ledger's order."""
    by_currency: dict[str, list[Entry]] = defaultdict(list)
    for e in entries:
        by_currency[e["currency"]].append(
            Entry(e["id"], e["kind"], e["amount"], e["currency"], e["reverses_id"])
        )
    return by_currency


def _entry_row(
    e: Mapping[str, Any], reversed_by: Mapping[int, int], campaign: Campaign
) -> dict[str, Any]:
    """One ledger line as the report lists it, linked both ways to its reversal."""
    return {
        "id": e["id"],
        "kind": e["kind"],
        "description": e["description"],
        "amount": format_money(e["amount"]),
        "currency": e["currency"],
        "reverses": e["reverses_id"],
        "reversed_by": reversed_by.get(e["id"]),
        "created_at": moment(e["created_at"]),
        "created_by": e["created_by__username"],
        # Late invoices and reversals still reach a closed campaign's ledger; say so.
        "after_close": campaign.closed_at is not None and e["created_at"] > campaign.closed_at,
    }


def _budget_left(budget: Any, incurred: Decimal) -> str | None:
    """The frozen budget less the incurred total; None when the snapshot froze no budget."""
    return None if budget is None else format_money(Decimal(budget) - incurred)


def _mixed_currency_note(currencies: Sequence[str], currency: str) -> str | None:
    """Why the other currencies' totals stand apart; None when the ledger has one currency."""
    if not currencies:
        return None
    return (
        f"Entries in {', '.join(currencies)} are listed apart: amounts "
        f"in different currencies are never summed with the {currency} ledger."
    )


def _ids_of_kind(entries: Sequence[Mapping[str, Any]], kind: str) -> list[int]:
    return [e["id"] for e in entries if e["kind"] == kind]


def costs_section(
    campaign: Campaign,
    snapshot: dict[str, Any],
    entries: Sequence[Mapping[str, Any]],
    deliverables: list[Deliverable],
) -> tuple[dict[str, Any], LedgerSummary]:
    """The report's costs: the campaign currency's totals against the frozen budget, every entry
    listed, and each other currency summed apart (docs/domain.md §12)."""
    facts = _deliverable_facts(deliverables)
    by_currency = _entries_by_currency(entries)
    # Amounts in another currency are never added to the campaign's: each is summed apart.
    summary = summarize(by_currency.get(campaign.currency, []), facts, campaign.currency)
    others = [
        summarize(group, facts, cur).to_json_dict()
        for cur, group in sorted(by_currency.items())
        if cur != campaign.currency
    ]
    reversed_by = {e["reverses_id"]: e["id"] for e in entries if e["reverses_id"]}
    totals = summary.to_json_dict()
    budget = snapshot.get("budget")
    costs = {
        **{k: v for k, v in totals.items() if k in _TOTAL_KEYS},
        "budget": budget,
        "budget_left": _budget_left(budget, summary.incurred),
        "entries": [_entry_row(e, reversed_by, campaign) for e in entries],
        "included_entries": _ids_of_kind(entries, EntryKind.INCLUDED),
        "external_entries": _ids_of_kind(entries, EntryKind.EXTERNAL),
        "other_currencies": others,
        "mixed_currency_note": _mixed_currency_note(
            [o["currency"] for o in others], campaign.currency
        ),
    }
    return costs, summary


def cost_per_accepted(campaign: Campaign, summary: LedgerSummary) -> dict[str, Any]:
    data: dict[str, Any] = dict(summary.to_json_dict())
    cur = summary.currency
    incurred = format_money(summary.incurred)
    if summary.ratio == "defined":
        noun = "corpus" if summary.accepted_deliverables == 1 else "corpora"
        data["statement"] = (
            f"{format_money(summary.cost_per_accepted or Decimal(0))} {cur} per accepted "
            f"deliverable: {incurred} {cur} incurred over {summary.accepted_deliverables} "
            f"distinct accepted {noun}. External costs "
            f"({format_money(summary.external)} {cur}) are listed apart."
        )
    else:
        data["statement"] = (
            f"Cost per accepted deliverable: undefined ({summary.undefined_reason}). "
            f"Incurred: {incurred} {cur}; the cost stands, a negative result does not erase it."
        )
    data["conclusion"] = campaign.conclusion or None
    if campaign.conclusion and summary.ratio == "undefined":
        # A research decision has no deliverable unit: the conclusion is what was bought.
        data["statement"] += f" What the campaign bought is a decision: {campaign.conclusion}"
    return data
