"""A person's correction of a run's hours reaches the ledger (docs/domain.md §5.8, §18.1): an
hourly run whose cost was posted when it finished gets one entry for the difference between
its corrected cost and what the ledger holds for it (its postings, their reversals and earlier
corrections), linked to the correction (posted once). The entry may be negative: it is a
correction, as a reversal is. A lot-covered run posts nothing (its share is an allocation)."""

from __future__ import annotations

from decimal import Decimal

from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import Q, Sum

from campaigns.domain.formatting import format_hours
from campaigns.models import Campaign, Run, RunHoursCorrection
from campaigns.selectors import run_cost
from ledger.models import EntryKind, LedgerEntry


def posted_for_run(run: Run) -> Decimal:
    """What the ledger holds for the run: its cost entries, the corrections of its hours, and
    any reversal of either."""
    about = (
        Q(run=run)
        | Q(run_correction__run=run)
        | Q(reverses__run=run)
        | Q(reverses__run_correction__run=run)
    )
    total = LedgerEntry.objects.filter(about).aggregate(total=Sum("amount"))["total"]
    return total or Decimal(0)


@transaction.atomic
def post_run_correction(
    *, correction: RunHoursCorrection, acting_user: User | None = None
) -> LedgerEntry | None:
    """Adjust a posted hourly run's cost to its corrected hours; None when nothing changes."""
    run = correction.run
    campaign = Campaign.objects.get(pk=run.campaign_id)
    gpu = run.variant.gpu if run.variant_id and run.variant else ""
    priced = run_cost.cost_of_run(run, run_cost.pricing(campaign), gpu=gpu)
    if priced is None or priced[1].basis != "hourly" or not run.ledger_entries.exists():
        return None
    cost, _rate = priced
    difference = cost - posted_for_run(run)
    if difference == 0:
        return None
    before = "?" if correction.before is None else format_hours(correction.before)
    return LedgerEntry.objects.create(
        campaign=campaign,
        kind=EntryKind.RENTAL,
        description=(
            f"Run {run.run_id}: hours corrected from {before} h to "
            f"{format_hours(correction.after)} h ({correction.reason})"
        )[:300],
        amount=difference,
        currency=campaign.currency,
        run_correction=correction,
        created_by=acting_user if getattr(acting_user, "pk", None) else None,
    )
