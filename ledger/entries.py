"""Posting to the ledger: new entries and reversals, one transaction each.

Entries are append-only (the model refuses updates and deletes, PostgreSQL's trigger too). A
correction is a reversal: a new entry of the same kind and currency, with the negated amount,
pointing at the entry it undoes. An entry is reversed at most once (the one-to-one `reverses`
column makes the database refuse a second reversal even under a race) and a reversal is never
reversed itself: to restore an amount, post it again.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction

from campaigns.models import Campaign

from .models import Deliverable, EntryKind, LedgerEntry, LedgerImmutable
from .ratios import (
    DeliverableFacts,
    Entry,
    LedgerSummary,
    MixedCurrencyError,
    format_money,
    summarize,
)


def check_entry(
    campaign: Campaign, *, kind: str, description: str, amount: Any, currency: str
) -> None:
    """Refuse (ValidationError naming the field) what `post_entry` would not append."""
    if kind not in EntryKind.values:
        raise ValidationError({"kind": f"expected one of {', '.join(EntryKind.values)}"})
    if not (description or "").strip():
        raise ValidationError({"description": "say what the money paid for"})
    if not isinstance(amount, Decimal) or not amount.is_finite():
        raise ValidationError({"amount": "an exact, finite decimal amount is required"})
    if amount < 0:
        raise ValidationError(
            {"amount": "a negative amount is a correction: post a reversal of the entry instead"}
        )
    if currency != campaign.currency:
        raise ValidationError(
            {
                "currency": (
                    f"this campaign's ledger is in {campaign.currency}; an amount in {currency} "
                    "is never summed with it"
                )
            }
        )


def check_reversal(original: LedgerEntry) -> None:
    """Refuse reversing a reversal, or an entry already reversed."""
    if original.reverses_id is not None:
        raise ValidationError(
            {
                "reverses": (
                    f"entry #{original.pk} is itself a reversal (of #{original.reverses_id}) and "
                    "is never reversed: post the original amount again instead"
                )
            }
        )
    already = LedgerEntry.objects.filter(reverses_id=original.pk).values_list("pk", flat=True)
    if already:
        raise ValidationError(
            {"reverses": f"entry #{original.pk} is already reversed by entry #{already[0]}"}
        )


@transaction.atomic
def post_entry(
    campaign: Campaign,
    *,
    kind: str,
    description: str,
    amount: Decimal,
    currency: str,
    user: Any = None,
) -> LedgerEntry:
    """Append one entry in the campaign's currency. Negative amounts are corrections: refused."""
    check_entry(campaign, kind=kind, description=description, amount=amount, currency=currency)
    return LedgerEntry.objects.create(
        campaign=campaign,
        kind=kind,
        description=description.strip(),
        amount=amount,
        currency=currency,
        created_by=user if getattr(user, "pk", None) else None,
    )


@transaction.atomic
def reverse_entry(
    campaign: Campaign,
    entry_id: int,
    *,
    description: str = "",
    expected: dict[str, Any] | None = None,
    user: Any = None,
) -> LedgerEntry:
    """Append the reversal of entry `entry_id` of this campaign.

    `expected` holds what the caller stated about the reversal (kind, amount, currency); each
    must agree with what the reversal will be, so a client never gets another amount than it sent.
    """
    # The lock serializes two concurrent reversals of one entry; the unique `reverses` column
    # is the last word if the lock is bypassed.
    original = (
        LedgerEntry.objects.select_for_update().filter(campaign=campaign, pk=entry_id).first()
    )
    if original is None:
        raise ValidationError({"reverses": f"no entry #{entry_id} in this campaign's ledger"})
    check_reversal(original)
    amount = -original.amount
    expected = expected or {}
    errors = {}
    if expected.get("kind") not in (None, original.kind):
        errors["kind"] = f"a reversal keeps the kind of the entry it undoes ({original.kind})"
    if expected.get("currency") not in (None, original.currency):
        errors["currency"] = (
            f"a reversal keeps the currency of the entry it undoes ({original.currency})"
        )
    if expected.get("amount") is not None and expected["amount"] != amount:
        errors["amount"] = (
            f"a reversal negates the amount it undoes: {format_money(amount)}, "
            "or leave the amount out"
        )
    if errors:
        raise ValidationError(errors)
    text = description.strip() or f"Reversal of #{original.pk}: {original.description}"
    try:
        with transaction.atomic():
            return LedgerEntry.objects.create(
                campaign=campaign,
                kind=original.kind,
                description=text[:300],
                amount=amount,
                currency=original.currency,
                reverses=original,
                created_by=user if getattr(user, "pk", None) else None,
            )
    except IntegrityError as exc:
        raise ValidationError({"reverses": f"entry #{original.pk} is already reversed"}) from exc


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


def campaign_summary(campaign: Campaign) -> LedgerSummary:
    """The ledger summary in the campaign's currency; MixedCurrencyError if it cannot be."""
    entries, facts = ledger_facts(campaign)
    return summarize(entries, facts, campaign.currency)


__all__ = [
    "LedgerImmutable",
    "MixedCurrencyError",
    "campaign_summary",
    "check_entry",
    "check_reversal",
    "ledger_facts",
    "post_entry",
    "reverse_entry",
]
