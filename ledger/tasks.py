"""Celery tasks of the ledger: thin wrappers that take ids and call `ledger.reports`.

Tasks import what they call inside their body: `ledger.services` imports this module to enqueue,
so a module-level import back would make the two import each other.
"""

from __future__ import annotations

from celery import shared_task


@shared_task(  # type: ignore[untyped-decorator]
    name="ledger.build_closing_report", acks_late=True, reject_on_worker_lost=True
)
def build_closing_report(report_id: int) -> str | None:
    """Build closing report `report_id`; safe to run twice (a ready report is left alone)."""
    from .reports import build

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

    from .models import Report, ReportStatus

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
