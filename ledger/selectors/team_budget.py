"""Reading a team's budget facts: its allowances, the ledger's incurred entries, the committed
lots, the running hourly runs and the campaigns' forecast ends, as `ledger.domain.team_budget`
takes them (docs/domain.md §22). Four queries, whatever the number of campaigns or entries.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

from django.utils import timezone

from campaigns.models import Campaign, CampaignStatus, Run, RunStatus
from estimates.models import Estimate
from ledger.domain import team_budget as tb
from ledger.models import EntryKind, LedgerEntry, TeamAllowance

INCURRED_KINDS = (EntryKind.RENTAL, EntryKind.INCLUDED)
_HOURS = Decimal("0.0001")


@dataclass(frozen=True)
class TeamFacts:
    allowances: tuple[tb.Allowance, ...]
    charges: tuple[tb.Charge, ...]
    burns: tuple[tb.Burn, ...]


def allowances(team_id: int) -> tuple[tb.Allowance, ...]:
    return tuple(
        tb.Allowance(
            kind=a.period_kind,  # type: ignore[arg-type]
            start=a.period_start,
            amount=a.amount,
            currency=a.currency,
            gpu_hours=a.gpu_hours,
            gpu_model=a.gpu_model,
            id=a.pk,
        )
        for a in TeamAllowance.objects.filter(team_id=team_id)
    )


_ENTRY_FIELDS = (
    "created_at",
    "amount",
    "currency",
    "campaign_id",
    "campaign__committed_at",
    "reservation_id",
    "reservation__start",
    "reservation__quantity",
    "reservation__plan__gpus_per_lot",
    "reservation__plan__duration_hours",
    "reservation__plan__gpu__name",
    "run__gpus",
    "run__observed_hours",
    "run__created_at",
    "run__finished_at",
    "run__stopped_at",
    "run__variant__gpu",
)


def _entry_charge(row: dict[str, Any], reversed_row: dict[str, Any] | None) -> tb.Charge:
    """A lot's entry is committed at the lot's start; a run's entry carries its GPU-hours; a
    reversal takes its original's nature with the hours negated, at its own posting date."""
    source = reversed_row or row
    sign = -1 if reversed_row is not None else 1
    gpu_hours, gpu, committed = Decimal(0), "", False
    at = row["created_at"]
    if source["reservation_id"] is not None:
        committed = True
        gpu = source["reservation__plan__gpu__name"] or ""
        gpu_hours = (
            source["reservation__plan__duration_hours"]
            * source["reservation__plan__gpus_per_lot"]
            * source["reservation__quantity"]
        )
        if reversed_row is None:
            at = row["reservation__start"] or row["campaign__committed_at"] or at
    elif source["run__gpus"] is not None:
        gpu = source["run__variant__gpu"] or ""
        ended = source["run__finished_at"] or source["run__stopped_at"] or source["created_at"]
        hours = source["run__observed_hours"]
        if hours is None:
            hours = Decimal(repr((ended - source["run__created_at"]).total_seconds())) / 3600
        gpu_hours = (Decimal(hours) * source["run__gpus"]).quantize(_HOURS)
    return tb.Charge(
        at=at,
        amount=row["amount"],
        currency=row["currency"],
        gpu_hours=sign * gpu_hours,
        gpu_model=gpu,
        committed=committed,
        campaign_id=row["campaign_id"],
    )


def charges(team_id: int) -> tuple[tb.Charge, ...]:
    """The team's incurred entries (external costs stand apart, §12) as charges (1 query)."""
    rows = list(
        LedgerEntry.objects.filter(campaign__team_id=team_id, kind__in=INCURRED_KINDS).values(
            "id", "reverses_id", *_ENTRY_FIELDS
        )
    )
    by_id = {row["id"]: row for row in rows}
    return tuple(
        _entry_charge(row, by_id.get(row["reverses_id"]) if row["reverses_id"] else None)
        for row in rows
    )


def forecast_ends(team_id: int) -> dict[int, datetime]:
    """Per committed campaign, where its spend is forecast to stop: committed_at + the landed
    forecast's hours, else the end of its window (2 queries)."""
    hours = dict(
        Estimate.objects.filter(campaign__team_id=team_id, item__isnull=True).values_list(
            "campaign_id", "outputs__totals__forecast_hours"
        )
    )
    ends: dict[int, datetime] = {}
    for pk, committed_at, window in Campaign.objects.filter(
        team_id=team_id, committed_at__isnull=False
    ).values_list("pk", "committed_at", "window_hours"):
        forecast = hours.get(pk)
        span = forecast if isinstance(forecast, int | float) and forecast >= 0 else window
        if committed_at is not None:
            ends[pk] = committed_at + timedelta(hours=float(span))
    return ends


def burns(team_id: int, ends: dict[int, datetime]) -> tuple[tb.Burn, ...]:
    """The running runs of the team's hourly-priced campaigns without lots (1 query): lots
    are paid up front and burn nothing by the hour."""
    rows = (
        Run.objects.filter(
            campaign__team_id=team_id,
            status=RunStatus.RUNNING,
            finished_at__isnull=True,
            campaign__hourly_rate_per_gpu__isnull=False,
            campaign__lots__isnull=True,
        )
        .exclude(campaign__status=CampaignStatus.CLOSED)
        .values_list(
            "created_at",
            "gpus",
            "campaign_id",
            "campaign__hourly_rate_per_gpu",
            "campaign__currency",
            "variant__gpu",
        )
    )
    return tuple(
        tb.Burn(
            since=since,
            money_per_hour=Decimal(rate or 0) * max(gpus, 1),
            currency=currency,
            gpus=max(gpus, 1),
            until=ends.get(campaign_id),
            gpu_model=gpu or "",
            campaign_id=campaign_id,
        )
        for since, gpus, campaign_id, rate, currency, gpu in rows
    )


def team_facts(team_id: int) -> TeamFacts:
    """Everything the team's budget is computed from (5 queries)."""
    return TeamFacts(allowances(team_id), charges(team_id), burns(team_id, forecast_ends(team_id)))


def team_budget(team_id: int, now: datetime | None = None) -> list[tb.PeriodBudget]:
    facts = team_facts(team_id)
    return tb.team_budget(facts.allowances, facts.charges, facts.burns, now or timezone.now())


def commit_charges(campaign: Campaign, now: datetime) -> list[tb.Charge]:
    """What committing `campaign` adds to its team's budget: each reserved lot's price and
    GPU-hours at the lot's start (now when it has none); for an hourly campaign without lots,
    its reserved machine hours × the hourly rate, now."""
    added = [
        tb.Charge(
            at=lot.start or now,
            amount=lot.total_price,
            currency=lot.plan.currency,
            gpu_hours=lot.plan.duration_hours * lot.plan.gpus_per_lot * lot.quantity,
            gpu_model=lot.plan.gpu.name,
            committed=True,
            campaign_id=campaign.pk,
        )
        for lot in campaign.lots.select_related("plan", "plan__gpu")
    ]
    if not added and campaign.hourly_rate_per_gpu is not None:
        hours = campaign.reserved_machine_hours()
        added.append(
            tb.Charge(
                at=now,
                amount=hours * campaign.hourly_rate_per_gpu,
                currency=campaign.currency,
                gpu_hours=hours,
                committed=True,
                campaign_id=campaign.pk,
            )
        )
    return added


def commit_preview(campaign: Campaign, now: datetime | None = None) -> list[str]:
    """In words, each period whose forecast committing `campaign` would take over its
    allowance (what the commit page asks to acknowledge); [] when none would be."""
    facts = team_facts(campaign.team_id)
    if not facts.allowances:
        return []
    now = now or timezone.now()
    extra = commit_charges(campaign, now)
    over = tb.exceeded_by(facts.allowances, facts.charges, facts.burns, extra, now)
    return [tb.describe(after) for _before, after in over]


def json_figures(figures: tb.Figures | None) -> dict[str, str] | None:
    if figures is None:
        return None
    return {
        "allowance": str(figures.allowance),
        "spent": str(figures.spent),
        "committed": str(figures.committed),
        "forecast": str(figures.forecast),
        "left": str(figures.left),
        "burn_per_hour": str(figures.burn_per_hour),
    }


def period_json(budget: tb.PeriodBudget) -> dict[str, Any]:
    """One period as GET /teams/{id}/budget/ answers it (money as strings)."""
    a = budget.allowance
    return {
        "allowance_id": a.id,
        "period": budget.label,
        "period_kind": a.kind,
        "start": budget.start.isoformat(),
        "end": budget.end.isoformat(),
        "gpu_model": a.gpu_model,
        "currency": a.currency or None,
        "money": json_figures(budget.money),
        "gpu_hours": json_figures(budget.gpu_hours),
        "run_out_at": budget.run_out_at.isoformat() if budget.run_out_at else None,
        "forecast_exceeds_allowance": budget.forecast_exceeds,
        "other_currencies": list(budget.other_currencies),
    }
