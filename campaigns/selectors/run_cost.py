"""Reading what runs cost so far: the campaign's lots and hourly rate as
campaigns/domain/run_cost.py
takes them (docs/domain.md §18). Reads only; the ledger posts finished hourly runs.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any

from django.utils import timezone

from campaigns.domain import run_cost as costs
from campaigns.domain.run_hours import RunClock, hours_so_far
from campaigns.models import Campaign, LotReservation, Run


@dataclass(frozen=True)
class Pricing:
    """What an hour costs in one campaign: its lots, its hourly rate and its currency."""

    lots: tuple[costs.LotPrice, ...]
    hourly_rate_per_gpu: Decimal | None
    currency: str

    def rate(self, gpu: str = "") -> costs.Rate | None:
        return costs.effective_rate(self.lots, self.hourly_rate_per_gpu, gpu)


def lot_prices(campaign_ids: Iterable[int]) -> dict[int, list[costs.LotPrice]]:
    """The reserved lots of these campaigns (one query)."""
    found: dict[int, list[costs.LotPrice]] = {}
    rows = LotReservation.objects.filter(campaign_id__in=list(campaign_ids)).values_list(
        "campaign_id",
        "plan__price",
        "quantity",
        "plan__duration_hours",
        "plan__gpus_per_lot",
        "plan__gpu__name",
    )
    for campaign_id, price, quantity, hours, gpus, gpu in rows:
        found.setdefault(campaign_id, []).append(
            costs.LotPrice(
                price=price, quantity=quantity, duration_hours=hours, gpus_per_lot=gpus, gpu=gpu
            )
        )
    return found


def pricing(campaign: Campaign) -> Pricing:
    lots = lot_prices([campaign.pk]).get(campaign.pk, [])
    return Pricing(tuple(lots), campaign.hourly_rate_per_gpu, campaign.currency)


def clock_of(run: Run) -> RunClock:
    """The run's clock as campaigns/domain/run_hours.py reads it: its current segment's start
    and end, its earlier segments' hours, and the hours its finish stated or a person set."""
    ended = run.ended_at or run.finished_at
    if ended is not None and ended < run.segment_start:
        ended = None  # the end belongs to an earlier stretch
    return RunClock(run.segment_start, ended, run.prior_hours, run.observed_hours)


def hours_of_run(run: Run, now: datetime | None = None) -> Decimal:
    """The run's hours (campaigns/domain/run_hours.py): recorded once it ended, else measured
    up to now."""
    return hours_so_far(clock_of(run), now or timezone.now())


def cost_of_run(
    run: Run, prices: Pricing, *, gpu: str = "", now: datetime | None = None
) -> tuple[Decimal, costs.Rate] | None:
    """The run's cost so far and the rate it was found with; None when nothing prices it."""
    rate = prices.rate(gpu)
    if rate is None:
        return None
    return costs.run_cost(hours_of_run(run, now), run.gpus, rate), rate


def cost_so_far(run: Run, now: datetime | None = None) -> dict[str, Any] | None:
    """`{"amount", "currency", "basis"}` as GET /runs/{run_id}/ shows it (docs/api.md)."""
    campaign = run.campaign
    gpu = run.variant.gpu if run.variant_id and run.variant else ""
    found = cost_of_run(run, pricing(campaign), gpu=gpu, now=now)
    if found is None:
        return None
    amount, rate = found
    return {"amount": str(amount), "currency": campaign.currency, "basis": rate.basis}


def point_costs(
    run: Run, points: Iterable[tuple[int, datetime]], *, now: datetime | None = None
) -> list[Decimal] | None:
    """Each point's cost, for `GET /runs/{run_id}/metrics/?x=cost` (docs/api.md): `points` are
    (step, logged_at). A finished run's cost is spread over its steps (its hours are final);
    a running run's is the wall time it had run when the point was logged. None when nothing
    prices an hour in this campaign."""
    gpu = run.variant.gpu if run.variant_id and run.variant else ""
    rate = pricing(run.campaign).rate(gpu)
    if rate is None:
        return None
    if run.finished_at is not None or run.stopped_at is not None:
        total = costs.run_cost(hours_of_run(run, now), run.gpus, rate)
        last = run.last_step or 0
        return [costs.cost_at_step(step, last, total) for step, _at in points]
    clock = clock_of(run)
    return [costs.cost_at_time(at, clock, run.gpus, rate) for _step, at in points]
