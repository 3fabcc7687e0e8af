"""Reading what the alert scan needs (docs/domain.md §19): one campaign's facts for the pure
`ledger.domain.alerts.conditions`, in a fixed number of queries whatever the number of runs and
points (the running runs' metric summaries, never their points), and who is told."""

from __future__ import annotations

from datetime import datetime, timedelta

from django.db.models import Max, Min, Sum

from campaigns.models import (
    Campaign,
    Checkpoint,
    Membership,
    MetricSummary,
    Role,
    Run,
    RunStatus,
    StopRule,
    StopRuleKind,
)
from campaigns.selectors import raw_points
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
    idle = idle_rule_figures(campaign)
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
        gpu_use=gpu_use(campaign, running, now - timedelta(minutes=idle.minutes)),
        idle=idle,
    )


# What the client's NVML sampler and MLflow's system metrics name a GPU's utilisation.
UTILISATION = r"^system/gpu_[0-9]+_utilization_percentage$"


def idle_rule(campaign_id: int) -> StopRule | None:
    """The campaign's first idle-GPU stop rule (docs/domain.md §4.1)."""
    rules = StopRule.objects.filter(campaign_id=campaign_id, kind=StopRuleKind.IDLE_GPU)
    return rules.order_by("id").first()


def idle_rule_figures(campaign: Campaign) -> alerts.IdleGpu:
    rule = idle_rule(campaign.pk)
    if rule is None or rule.threshold is None or not rule.for_minutes:
        return alerts.IdleGpu()
    return alerts.IdleGpu(percent=float(rule.threshold), minutes=float(rule.for_minutes))


def gpu_use(
    campaign: Campaign, running: tuple[str, ...], since: datetime
) -> tuple[alerts.GpuUse, ...]:
    """Each running run's GPU utilisation since ``since``: two statements whatever the runs
    (the utilisation metrics' summaries, then their points in the window)."""
    rows = list(
        MetricSummary.objects.filter(
            run__campaign=campaign, run__run_id__in=running, name__regex=UTILISATION
        ).values_list("pk", "run_id", "run__run_id", "first_at", "last_at")
    )
    if not rows:
        return ()
    busiest = raw_points.busiest_since({r[1] for r in rows}, {r[0] for r in rows}, since)
    spans: dict[int, tuple[str, datetime, datetime]] = {}
    for _key, run_pk, run_id, first, last in rows:
        seen = spans.get(run_pk)
        spans[run_pk] = (
            (run_id, min(seen[1], first), max(seen[2], last)) if seen else (run_id, first, last)
        )
    return tuple(
        alerts.GpuUse(run_id, busiest.get(run_pk), first, last)
        for run_pk, (run_id, first, last) in sorted(spans.items())
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
