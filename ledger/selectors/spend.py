"""What a campaign has spent so far: the ledger's incurred total plus the hourly accrual of the
runs the ledger does not hold yet (docs/domain.md §18; the arithmetic is
campaigns/domain/run_cost.py).

Lot-covered runs add nothing: the lots' price is in the ledger since the commit, and a run's
lot share is an allocation of it. An hourly run is accrued while it runs and posted once when
it finishes (`services.post_run_cost`); from then on only the ledger counts it.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

from django.db.models import Sum
from django.utils import timezone

from campaigns.domain import run_cost as costs
from campaigns.models import Campaign, Run, RunStatus
from campaigns.selectors import run_cost as accrual
from estimates.models import Estimate
from ledger.domain import spend as burn
from ledger.models import EntryKind, LedgerEntry

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
        .select_related("variant")
        .prefetch_related("ledger_entries")
        .order_by("created_at", "id")
    )
    found = []
    for run in runs:
        priced = accrual.cost_of_run(
            run, prices, gpu=run.variant.gpu if run.variant else "", now=now
        )
        if priced is None:
            continue
        amount, rate = priced
        # A resumed run's earlier stretches are posted already: only the rest accrues.
        entries = list(run.ledger_entries.all())
        posted = bool(entries) and run.finished_at is not None
        if entries and not posted:
            amount = max(amount - sum((e.amount for e in entries), Decimal(0)), Decimal(0))
        found.append((run, costs.RunAccrual(amount, rate.basis, posted)))
    return found


def load_campaign_spend(campaign: Campaign, now: datetime | None = None) -> Decimal:
    """Incurred + hourly accrual not yet posted, in the campaign's currency."""
    if campaign.lots.exists():
        # Every run is a lot share: the ledger is the whole spend.
        return costs.money(incurred(campaign))
    accruals = [a for _run, a in run_accruals(campaign, now)]
    return costs.campaign_spend(incurred(campaign), accruals)


def _forecast_hours(campaign: Campaign) -> Decimal | None:
    """The landed campaign forecast's end-to-end hours, if one has landed (never computed here:
    a read must not wait for the calendar)."""
    outputs = (
        Estimate.objects.filter(campaign=campaign, item__isnull=True)
        .values_list("outputs", flat=True)
        .first()
    )
    hours = (outputs or {}).get("totals", {}).get("forecast_hours") if outputs else None
    if isinstance(hours, int | float) and hours >= 0:
        return Decimal(repr(float(hours)))
    return None


def _incurred_postings(campaign: Campaign) -> list[burn.Posting]:
    """The incurred entries in the campaign's currency, oldest first (one query): the series is
    cumulative, so the order is the posting order, ties broken by id."""
    rows = (
        LedgerEntry.objects.filter(
            campaign=campaign, kind__in=INCURRED_KINDS, currency=campaign.currency
        )
        .order_by("created_at", "id")
        .values_list("created_at", "amount")
    )
    return [burn.Posting(at, amount) for at, amount in rows]


def _burn_rate(prices: accrual.Pricing, accruals: list[tuple[Run, costs.RunAccrual]]) -> Decimal:
    """The hourly rate times the GPUs of the runs still running; zero under lots (their price is
    in the ledger since the commit) or when nothing prices an hour."""
    if prices.lots or prices.hourly_rate_per_gpu is None:
        return costs.ZERO
    running = sum(
        run.gpus
        for run, _a in accruals
        if run.status == RunStatus.RUNNING and run.finished_at is None
    )
    return costs.money(prices.hourly_rate_per_gpu * running)


def _window_and_forecast_ends(campaign: Campaign) -> tuple[datetime | None, datetime | None]:
    """When the committed window closes and when the landed forecast says the work ends; both
    None before the commit (nothing is counted from before it)."""
    if not campaign.committed_at:
        return None, None
    window_end = campaign.committed_at + timedelta(hours=float(campaign.window_hours))
    forecast_hours = _forecast_hours(campaign)
    forecast_end = (
        None
        if forecast_hours is None
        else campaign.committed_at + timedelta(hours=float(forecast_hours))
    )
    return window_end, forecast_end


def _lot_windows(campaign: Campaign) -> list[burn.LotWindow]:
    """Each lot's span; a lot without its own start runs from the commit."""
    return [
        burn.LotWindow(lot.start or campaign.committed_at, lot.plan.duration_hours)
        for lot in campaign.lots.select_related("plan").order_by("id")
    ]


def _str_or_none(value: object | None) -> str | None:
    return None if value is None else str(value)


def spend_over_time(campaign: Campaign, now: datetime | None = None) -> dict[str, Any]:
    """GET /campaigns/{id}/spend/ (docs/api.md): series, budget, burn rate, projection, lots and
    the window's hours left, in the campaign's currency. A fixed number of queries."""
    now = now or timezone.now()
    prices = accrual.pricing(campaign)
    # Under lots every run is a lot share already in the ledger: nothing accrues beside it.
    accruals = [] if prices.lots else run_accruals(campaign, now)
    unposted = costs.unposted_accrual(a for _run, a in accruals)
    burn_rate = _burn_rate(prices, accruals)
    series = burn.cumulative_series(_incurred_postings(campaign), unposted, now)
    spent = series[-1][1]
    window_end, forecast_end = _window_and_forecast_ends(campaign)
    projection = burn.project(spent, burn_rate, now, forecast_end, window_end)
    return {
        "currency": campaign.currency,
        "series": [{"at": at.isoformat(), "cumulative": str(total)} for at, total in series],
        "spent": str(spent),
        "budget": _str_or_none(campaign.budget),
        "burn_rate_per_hour": str(burn_rate),
        "projection": None if projection is None else projection.as_json(),
        "lots": burn.lot_windows(_lot_windows(campaign), now),
        "window_hours_left": (
            None if window_end is None else str(burn.hours_between(now, window_end))
        ),
    }
