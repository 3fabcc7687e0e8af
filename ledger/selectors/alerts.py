"""Reading what the alert scan needs (docs/domain.md §19): one campaign's facts for the pure
`ledger.domain.alerts.conditions`, in a fixed number of queries, and who is told."""

from __future__ import annotations

from datetime import datetime, timedelta

from django.db.models import Max, Min, Sum

from campaigns.models import Campaign, Checkpoint, Membership, MetricSummary, Role, Run, RunStatus
from estimates.models import Estimate
from ledger.domain import alerts
from ledger.selectors import spend


def campaign_facts(campaign: Campaign, now: datetime) -> alerts.CampaignFacts:
    lots = []
    for lot in campaign.lots.select_related("plan").order_by("id"):
        start = lot.start or campaign.committed_at
        if start is None:
            continue
        end = start + timedelta(hours=float(lot.plan.duration_hours))
        lots.append(alerts.LotEnd(f"lot:{lot.pk}", f"lot {lot.plan.provider} {lot.plan.name}", end))
    running = tuple(
        Run.objects.filter(
            campaign=campaign, status=RunStatus.RUNNING, finished_at__isnull=True
        ).values_list("run_id", flat=True)
    )
    checkpoint = (
        Checkpoint.objects.filter(run__campaign=campaign, resume_verified=True)
        .select_related("run")
        .order_by("-created_at", "-id")
        .first()
    )
    latest = (
        alerts.LatestCheckpoint(
            f"checkpoint:{checkpoint.pk}",
            checkpoint.run.run_id,
            checkpoint.step,
            checkpoint.location,
            checkpoint.retrieved,
        )
        if checkpoint is not None
        else None
    )
    outputs = (
        Estimate.objects.filter(campaign=campaign, item__isnull=True)
        .values_list("outputs", flat=True)
        .first()
    )
    over = (outputs or {}).get("over_hours") if isinstance(outputs, dict) else None
    activity = tuple(
        alerts.RunActivity(run_id, count, first, last)
        # The running runs' summaries (a row per metric), never the points: the scan costs the
        # same at a thousand points as at a billion.
        for run_id, count, first, last in MetricSummary.objects.filter(
            run__campaign=campaign, run__run_id__in=running
        )
        .values("run__run_id")
        .annotate(n=Sum("count"), first=Min("first_at"), last=Max("last_at"))
        .values_list("run__run_id", "n", "first", "last")
    )
    return alerts.CampaignFacts(
        now=now,
        currency=campaign.currency,
        lots=tuple(lots),
        running_runs=running,
        latest_checkpoint=latest,
        spent=spend.load_campaign_spend(campaign, now) if campaign.budget is not None else None,
        budget=campaign.budget,
        over_hours=float(over) if isinstance(over, int | float) else None,
        activity=activity,
    )


def owner_emails(team_id: int) -> list[str]:
    return sorted(
        {
            email
            for email in Membership.objects.filter(team_id=team_id, role=Role.OWNER).values_list(
                "user__email", flat=True
            )
            if email
        }
    )
