"""What a campaign has spent so far: the ledger's incurred total plus the hourly accrual of the
runs the ledger does not hold yet (docs/domain.md §18; the arithmetic is campaigns/costs.py).

Lot-covered runs add nothing: the lots' price is in the ledger since the commit, and a run's
lot share is an allocation of it. An hourly run is accrued while it runs and posted once when
it finishes (`services.post_run_cost`); from then on only the ledger counts it.
"""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal

from django.db.models import Sum
from django.utils import timezone

from campaigns import accrual, costs
from campaigns.models import Campaign, Run

from .models import EntryKind, LedgerEntry

INCURRED_KINDS = (EntryKind.RENTAL, EntryKind.INCLUDED)


def incurred(campaign: Campaign) -> Decimal:
    """Rental + included entries in the campaign's currency (external costs are listed apart)."""
    total = LedgerEntry.objects.filter(
        campaign=campaign, kind__in=INCURRED_KINDS, currency=campaign.currency
    ).aggregate(total=Sum("amount"))["total"]
    return Decimal(total or 0)


def run_accruals(
    campaign: Campaign, now: datetime | None = None
) -> list[tuple[Run, costs.RunAccrual]]:
    """Each run of the campaign with its cost so far and whether the ledger holds it (2 queries;
    none for the runs when nothing prices an hour)."""
    prices = accrual.pricing(campaign)
    if not prices.lots and prices.hourly_rate_per_gpu is None:
        return []
    now = now or timezone.now()
    runs = (
        Run.objects.filter(campaign=campaign)
        .select_related("variant", "ledger_entry")
        .order_by("created_at", "id")
    )
    found = []
    for run in runs:
        priced = accrual.run_cost(run, prices, gpu=run.variant.gpu if run.variant else "", now=now)
        if priced is None:
            continue
        amount, rate = priced
        posted = getattr(run, "ledger_entry", None) is not None
        found.append((run, costs.RunAccrual(amount, rate.basis, posted)))
    return found


def campaign_spend(campaign: Campaign, now: datetime | None = None) -> Decimal:
    """Incurred + hourly accrual not yet posted, in the campaign's currency."""
    if campaign.lots.exists():
        # Every run is a lot share: the ledger is the whole spend.
        return costs.money(incurred(campaign))
    accruals = [a for _run, a in run_accruals(campaign, now)]
    return costs.campaign_spend(incurred(campaign), accruals)
