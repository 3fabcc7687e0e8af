"""Celery tasks of the ledger: thin wrappers that take ids and call `ledger.reports`, the
alert scan and the alert delivery.

Tasks import what they call inside their body: `ledger.services` imports this module to enqueue,
so a module-level import back would make the two import each other.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from celery import shared_task

logger = logging.getLogger(__name__)


def _enqueue_each(task: Any, ids: Sequence[int]) -> int:
    """Enqueue `task` once per id; how many were enqueued (what the periodic tasks return)."""
    for pk in ids:
        task.delay(pk)
    return len(ids)


@shared_task(  # type: ignore[untyped-decorator]
    name="ledger.build_closing_report", acks_late=True, reject_on_worker_lost=True
)
def build_closing_report(report_id: int) -> str | None:
    """Build closing report `report_id`; safe to run twice (a ready report is left alone)."""
    from ledger.reports import build

    report = build(int(report_id))
    return report.status if report is not None else None


@shared_task(  # type: ignore[untyped-decorator]
    name="ledger.sweep_stale_reports", acks_late=True, reject_on_worker_lost=True
)
def sweep_stale_reports() -> int:
    """Periodic (CELERY_BEAT_SCHEDULE): re-enqueue closing reports left pending or running for
    longer than REPORT_STALE_SECONDS; returns how many.

    A worker killed whole (not only its pool child) leaves its message unacknowledged until
    Redis's visibility timeout, and the report "running" meanwhile; a message lost before it
    reached the broker leaves it "pending" for ever. Re-enqueueing is safe because the build is
    idempotent: whichever run finishes first lands the report, a later one finds it ready and
    changes nothing (ledger.reports.build).
    """
    from datetime import timedelta

    from django.conf import settings
    from django.db.models import Q
    from django.utils import timezone

    from ledger.models import Report, ReportStatus

    cutoff = timezone.now() - timedelta(seconds=settings.REPORT_STALE_SECONDS)
    due = list(
        Report.objects.filter(
            Q(status=ReportStatus.PENDING, created_at__lt=cutoff)
            | Q(status=ReportStatus.RUNNING, started_at__lt=cutoff)
        )
        .order_by("created_at", "id")
        .values_list("pk", flat=True)[:1000]
    )
    return _enqueue_each(build_closing_report, due)


@shared_task(  # type: ignore[untyped-decorator]
    name="ledger.scan_alerts", acks_late=True, reject_on_worker_lost=True
)
def scan_live_campaigns() -> int:
    """Periodic (CELERY_BEAT_SCHEDULE): scan every committed or running campaign for alert
    conditions (docs/domain.md §19, `ledger.services.alerts.scan_alerts`); returns how many
    alerts were raised. Safe to run twice: an open alert is never stored again."""
    from campaigns.models import Campaign, CampaignStatus
    from ledger.services.alerts import scan_alerts

    raised = 0
    for campaign in Campaign.objects.filter(
        status__in=[CampaignStatus.COMMITTED, CampaignStatus.RUNNING]
    ).order_by("id"):
        # Each scan commits before the next: its deliveries are enqueued on that commit.
        raised += len(scan_alerts(campaign=campaign))
    return raised


@shared_task(  # type: ignore[untyped-decorator]
    bind=True,
    name="ledger.deliver_alert",
    acks_late=True,
    reject_on_worker_lost=True,
    max_retries=None,  # the outbox counts attempts (ALERT_DELIVERY_MAX_ATTEMPTS)
)
def deliver_alert(self: Any, alert_id: int) -> str:
    """Attempt alert `alert_id`'s due deliveries (docs/domain.md §19.5): each channel is claimed,
    sent, then recorded as sent; a failure is retried after ALERT_WEBHOOK_BACKOFF × 2^n seconds
    (here, and by the retry scan should this retry be lost); a refused target is not retried.
    Returns each channel's state, e.g. "email:sent webhook:failed"."""
    from ledger import alert_delivery as alerting
    from ledger.models import Alert

    alert = Alert.objects.select_related("campaign", "campaign__team").filter(pk=alert_id).first()
    if alert is None:
        return "gone"
    states, retry_in = alerting.deliver_due(alert)
    if retry_in is not None and not self.request.is_eager:
        # Inline (no broker), a retry would run at once: the row waits for the retry scan.
        raise self.retry(countdown=retry_in)
    return " ".join(f"{channel}:{state}" for channel, state in sorted(states.items()))


@shared_task(  # type: ignore[untyped-decorator]
    name="ledger.retry_alert_deliveries", acks_late=True, reject_on_worker_lost=True
)
def retry_alert_deliveries() -> int:
    """Periodic (CELERY_BEAT_SCHEDULE): enqueue every alert with a delivery due (never enqueued
    because the broker was down, failed and due again, or claimed by a worker that died);
    returns how many. A duplicate is harmless: a delivery is claimed once."""
    from ledger.alert_delivery import due_alert_ids

    return _enqueue_each(deliver_alert, due_alert_ids())


@shared_task(  # type: ignore[untyped-decorator]
    name="ledger.scan_team_budgets", acks_late=True, reject_on_worker_lost=True
)
def scan_team_budgets() -> int:
    """Periodic: the team-budget alert of every team with allowances (docs/domain.md §22),
    delivered like the campaign alerts; returns how many were raised."""
    from ledger.models import TeamAllowance
    from ledger.team_budget_alerts import store_team_budget_alerts

    raised = 0
    for team_id in TeamAllowance.objects.values_list("team_id", flat=True).distinct():
        raised += _enqueue_each(deliver_alert, [a.pk for a in store_team_budget_alerts(team_id)])
    return raised


@shared_task(  # type: ignore[untyped-decorator]
    bind=True,
    name="ledger.deliver_alert_to_channel",
    acks_late=True,
    reject_on_worker_lost=True,
    max_retries=6,
)
def deliver_alert_to_channel(self: Any, alert_id: int, channel_id: int) -> str:
    """Post alert `alert_id` to one Slack/Teams channel, retrying that channel alone with
    exponential backoff (ALERT_WEBHOOK_BACKOFF seconds × 2^n; docs/domain.md §19.4)."""
    from django.conf import settings

    from ledger import alert_channels
    from ledger.models import Alert, AlertChannel

    alert = Alert.objects.select_related("campaign", "campaign__team").filter(pk=alert_id).first()
    channel = AlertChannel.objects.filter(pk=channel_id).first()
    if alert is None or channel is None:
        return "gone"
    try:
        alert_channels.deliver_to_channel(alert, channel)
    except Exception as exc:
        backoff = float(getattr(settings, "ALERT_WEBHOOK_BACKOFF", 30))
        raise self.retry(exc=exc, countdown=backoff * 2**self.request.retries) from exc
    return "delivered"
