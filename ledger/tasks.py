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
    from . import reports

    report = reports.build(report_id)
    return report.status if report is not None else None
