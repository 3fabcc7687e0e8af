"""Reading the ledger: its entries and deliverables as the pure facts
`ledger.domain.cost_per_deliverable` sums.

The summary is what `GET /campaigns/{id}/ledger/summary/` answers and the closing report shows:
cost per accepted deliverable, counted by distinct accepted corpus (docs/domain.md §13).
"""

from __future__ import annotations

from campaigns.models import Campaign
from ledger.domain.cost_per_deliverable import DeliverableFacts, Entry, LedgerSummary, summarize
from ledger.models import Deliverable, LedgerEntry


def ledger_facts(campaign: Campaign) -> tuple[list[Entry], list[DeliverableFacts]]:
    """The campaign's entries and deliverables as the pure ledger module sees them (2 queries)."""
    entries = [
        Entry(id=pk, kind=kind, amount=amount, currency=currency, reverses=reverses)  # type: ignore[arg-type]
        for pk, kind, amount, currency, reverses in LedgerEntry.objects.filter(
            campaign=campaign
        ).values_list("id", "kind", "amount", "currency", "reverses_id")
    ]
    facts = [
        DeliverableFacts(
            corpus_name=name,
            corpus_revision=revision,
            accepted=accepted,
            rejection_reasons=() if accepted else tuple(reasons or ()),
        )
        for name, revision, accepted, reasons in Deliverable.objects.filter(
            campaign=campaign
        ).values_list("corpus_name", "corpus_revision", "accepted", "rejection_reasons")
    ]
    return entries, facts


def ledger_summary(campaign: Campaign) -> LedgerSummary:
    """The ledger summary in the campaign's currency; MixedCurrencyError if it cannot be."""
    entries, facts = ledger_facts(campaign)
    return summarize(entries, facts, campaign.currency)


def deliverable_counts(campaign: Campaign) -> tuple[int, int]:
    """(accepted, rejected) deliverables of the campaign, for its page (one query)."""
    accepted = rejected = 0
    for verdict in Deliverable.objects.filter(campaign=campaign).values_list("accepted", flat=True):
        if verdict:
            accepted += 1
        else:
            rejected += 1
    return accepted, rejected
