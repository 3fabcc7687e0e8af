"""Celery tasks of the ledger: thin wrappers that take ids and call `ledger.reports`, the
alert scan and the alert delivery.

Tasks import what they call inside their body: `ledger.services` imports this module to enqueue,
so a module-level import back would make the two import each other.
"""

from __future__ import annotations

from typing import Any

from celery import shared_task


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
    for report_id in due:
        build_closing_report.delay(report_id)
    return len(due)


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
    max_retries=6,
)
def deliver_alert(self: Any, alert_id: int) -> str:
    """Email alert `alert_id` to the team's owners (once) and POST it to the team's webhook,
    retrying the webhook with exponential backoff (ALERT_WEBHOOK_BACKOFF seconds × 2^n)."""
    from django.conf import settings

    from ledger import alert_delivery as alerting
    from ledger.models import Alert
    from ledger.selectors.alerts import owner_emails

    alert = Alert.objects.select_related("campaign", "campaign__team").filter(pk=alert_id).first()
    if alert is None:
        return "gone"
    # Marked first (at most once): a retry for the webhook never sends the email again.
    if (
        alert.emailed_at is None
        and owner_emails(alert.campaign.team_id)
        and alerting.mark_emailed(alert)
    ):
        alerting.deliver_email(alert)
    team = alert.campaign.team
    if not team.webhook_url or alert.webhook_delivered_at is not None:
        return "emailed"
    try:
        alerting.deliver_webhook(alert, team.webhook_url, team.webhook_secret)
    except Exception as exc:
        alerting.record_webhook_attempt(alert, error=f"{type(exc).__name__}: {exc}")
        backoff = float(getattr(settings, "ALERT_WEBHOOK_BACKOFF", 30))
        raise self.retry(exc=exc, countdown=backoff * 2**self.request.retries) from exc
    alerting.record_webhook_attempt(alert)
    return "delivered"
