"""Celery tasks of the ledger: thin wrappers that take ids and call the closing report's build
(`ledger.services.closing_reports`), the alert scans and the alert outbox's delivery rounds.

Their options (acks_late, reject_on_worker_lost, time limits, queues) are the settings' for
every task (config/settings.py). Tasks import what they call inside their body: `ledger.services`
imports this module to enqueue, so a module-level import back would make the two import each
other.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from celery import shared_task


def _enqueue_each(task: Any, ids: Sequence[int]) -> int:
    """Enqueue `task` once per id; how many were enqueued (what the periodic tasks return)."""
    for pk in ids:
        task.delay(pk)
    return len(ids)


@shared_task(name="ledger.build_closing_report")  # type: ignore[untyped-decorator]
def build_closing_report(report_id: int) -> str | None:
    """Build closing report `report_id`; safe to run twice (a ready report is left alone)."""
    from ledger.services.closing_reports import build

    report = build(int(report_id))
    return report.status if report is not None else None


@shared_task(name="ledger.sweep_stale_reports")  # type: ignore[untyped-decorator]
def sweep_stale_reports() -> int:
    """Periodic (CELERY_BEAT_SCHEDULE): re-enqueue closing reports left pending or running for
    longer than REPORT_STALE_SECONDS; returns how many.

    A worker killed whole (not only its pool child) leaves its message unacknowledged until
    Redis's visibility timeout, and the report "running" meanwhile; a message lost before it
    reached the broker leaves it "pending" for ever. Re-enqueueing is safe because the build is
    idempotent: whichever run finishes first lands the report, a later one finds it ready and
    changes nothing (ledger.services.closing_reports.build).
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


@shared_task(name="ledger.scan_alerts")  # type: ignore[untyped-decorator]
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
    name="ledger.deliver_alerts",
)
def deliver_alerts(self: Any) -> str:
    """Send the outbox's due deliveries, fairest first, for up to ALERT_DELIVERY_ROUND_SECONDS
    (docs/domain.md §19.5); wakes another round when rows are left, and one when the earliest
    failed row is due again (the beat does too, should that message be lost). Returns the
    states of what it sent, e.g. "failed:1 sent:3"."""
    from django.conf import settings
    from django.utils import timezone

    from ledger.selectors.alert_deliveries import seconds_to_next
    from ledger.services.alert_deliveries import deliver_due

    done = deliver_due(seconds=float(getattr(settings, "ALERT_DELIVERY_ROUND_SECONDS", 30)))
    if not self.request.is_eager:
        # Inline (no broker) a follow-up would run at once: the rows wait for the beat.
        # Another round when rows are left, or when a failed row waits for its backoff (failed
        # in this round or an earlier one: a round that only sent must still wake the next).
        wait = 0.0 if done.more else seconds_to_next(timezone.now())
        if wait is not None and (done.more or done.states["failed"] or wait > 0):
            self.apply_async(countdown=wait)
    return " ".join(f"{state}:{n}" for state, n in sorted(done.states.items()))


@shared_task(name="ledger.retry_alert_deliveries")  # type: ignore[untyped-decorator]
def retry_alert_deliveries() -> int:
    """Periodic (CELERY_BEAT_SCHEDULE): wake a delivery round when a row is due (never
    enqueued because the broker was down or Redis restarted, failed and due again, or claimed
    by a worker that died); 1 when it did. A second round is harmless: a row is claimed once."""
    from django.utils import timezone

    from ledger.selectors.alert_deliveries import any_due

    if not any_due(timezone.now()):
        return 0
    deliver_alerts.delay()
    return 1


@shared_task(name="ledger.scan_team_budgets")  # type: ignore[untyped-decorator]
def scan_team_budgets() -> int:
    """Periodic: the team-budget alert of every team with allowances (docs/domain.md §22),
    delivered like the campaign alerts; returns how many were raised."""
    from ledger.models import TeamAllowance
    from ledger.services.team_budget_alerts import store_team_budget_alerts

    teams = TeamAllowance.objects.values_list("team_id", flat=True).distinct()
    return sum(len(store_team_budget_alerts(team_id=team_id)) for team_id in teams)
