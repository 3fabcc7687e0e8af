"""Reading what the alert scan needs (docs/domain.md §19): one campaign's facts for the pure
`ledger.domain.alerts.conditions`, in a fixed number of queries whatever the number of runs and
points (the running runs' metric summaries, never their points), and who is told."""

from __future__ import annotations

from datetime import datetime, timedelta

from django.db.models import Max, Min, Sum

from campaigns.models import Campaign, Checkpoint, Membership, MetricSummary, Role, Run, RunStatus
from estimates.models import Estimate
from ledger.domain import alerts
from ledger.models import MetricThreshold
from ledger.selectors import spend


def lot_ends(campaign: Campaign) -> tuple[alerts.LotEnd, ...]:
    lots = []
    for lot in campaign.lots.select_related("plan").order_by("id"):
        start = lot.start or campaign.committed_at
        if start is None:
            continue
        end = start + timedelta(hours=float(lot.plan.duration_hours))
        lots.append(alerts.LotEnd(f"lot:{lot.pk}", f"lot {lot.plan.provider} {lot.plan.name}", end))
    return tuple(lots)


def latest_checkpoint(campaign: Campaign) -> alerts.LatestCheckpoint | None:
    checkpoint = (
        Checkpoint.objects.filter(run__campaign=campaign, resume_verified=True)
        .select_related("run")
        .order_by("-created_at", "-id")
        .first()
    )
    if checkpoint is None:
        return None
    return alerts.LatestCheckpoint(
        f"checkpoint:{checkpoint.pk}",
        checkpoint.run.run_id,
        checkpoint.step,
        checkpoint.location,
        checkpoint.retrieved,
    )


def over_hours(campaign: Campaign) -> float | None:
    outputs = (
        Estimate.objects.filter(campaign=campaign, item__isnull=True)
        .values_list("outputs", flat=True)
        .first()
    )
    over = outputs.get("over_hours") if isinstance(outputs, dict) else None
    return float(over) if isinstance(over, int | float) else None


def activity(campaign: Campaign, running: tuple[str, ...]) -> tuple[alerts.RunActivity, ...]:
    rows = (
        MetricSummary.objects.filter(run__campaign=campaign, run__run_id__in=running)
        .values("run__run_id")
        .annotate(n=Sum("count"), first=Min("first_at"), last=Max("last_at"))
        .values_list("run__run_id", "n", "first", "last")
    )
    return tuple(alerts.RunActivity(run_id, n, first, last) for run_id, n, first, last in rows)


def thresholds(team_id: int) -> tuple[alerts.MetricThreshold, ...]:
    rows = MetricThreshold.objects.filter(team_id=team_id).order_by("id")
    return tuple(
        alerts.MetricThreshold(t.pk, t.metric, t.comparator, t.threshold)  # type: ignore[arg-type]
        for t in rows
    )


def extremes(
    campaign: Campaign, running: tuple[str, ...], metrics: set[str]
) -> tuple[alerts.MetricExtremes, ...]:
    if not metrics:
        return ()
    rows = MetricSummary.objects.filter(
        run__campaign=campaign, run__run_id__in=running, name__in=metrics
    ).values_list("run__run_id", "name", "min_value", "max_value")
    return tuple(alerts.MetricExtremes(*row) for row in rows)


def campaign_facts(campaign: Campaign, now: datetime) -> alerts.CampaignFacts:
    running = tuple(
        Run.objects.filter(
            campaign=campaign, status=RunStatus.RUNNING, finished_at__isnull=True
        ).values_list("run_id", flat=True)
    )
    watched = thresholds(campaign.team_id)
    return alerts.CampaignFacts(
        now=now,
        currency=campaign.currency,
        lots=lot_ends(campaign),
        running_runs=running,
        latest_checkpoint=latest_checkpoint(campaign),
        spent=spend.load_campaign_spend(campaign, now) if campaign.budget is not None else None,
        budget=campaign.budget,
        over_hours=over_hours(campaign),
        activity=activity(campaign, running),
        thresholds=watched,
        extremes=extremes(campaign, running, {t.metric for t in watched}),
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
