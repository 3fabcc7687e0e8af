"""Building a closing report: the frozen plan set beside what happened, stored in HTML, Markdown and
JSON (docs/domain.md §16).

`ledger.services.request_report` records a pending Report and enqueues its build once the
transaction commits; `build(report_id)` (the Celery task's body) is the one writer of a report's
status and renderings. What it reads is `ledger.selectors.closing_report` (the sections, in a
fixed number of queries; every hour figure from the campaign's one timeline), with the pure
rules of `ledger/domain/`; how it is drawn is `ledger.rendering.closing_report`.
"""

from __future__ import annotations

import logging

from django.db import transaction
from django.utils import timezone

from campaigns.models import Campaign
from ledger.models import Report, ReportStatus
from ledger.rendering.closing_report import render_html, render_markdown
from ledger.selectors.closing_report import collect

logger = logging.getLogger(__name__)


def build(report_id: int) -> Report | None:
    """Build and store report `report_id`; a report already ready is left as it is.

    Idempotent: a message delivered twice (acks_late after a lost worker) rebuilds a report that
    never finished and skips one that did. A failure is recorded on the report, not raised, so
    the request that asked for it can read why.
    """
    with transaction.atomic():
        report = Report.objects.select_for_update().filter(pk=report_id).first()
        if report is None:
            logger.warning("closing report %s no longer exists; nothing to build", report_id)
            return None
        if report.status == ReportStatus.READY:
            return report
        Report.objects.filter(pk=report_id).update(
            status=ReportStatus.RUNNING, started_at=timezone.now(), error=""
        )
    try:
        campaign = Campaign.objects.select_related("team", "committed_by", "closed_by").get(
            pk=report.campaign_id
        )
        data = collect(campaign)
        html = render_html(data)
        markdown = render_markdown(data)
    except Exception as exc:
        logger.exception("closing report %s failed", report_id)
        # Another run of the same report (a redelivery, the stale-report sweep) may have
        # landed it meanwhile: a ready report is never overwritten, so it lands once.
        Report.objects.filter(pk=report_id).exclude(status=ReportStatus.READY).update(
            status=ReportStatus.FAILED,
            error=f"{type(exc).__name__}: {exc}"[:2000],
            finished_at=timezone.now(),
        )
    else:
        Report.objects.filter(pk=report_id).exclude(status=ReportStatus.READY).update(
            status=ReportStatus.READY,
            html=html,
            markdown=markdown,
            data=data,
            error="",
            finished_at=timezone.now(),
        )
    return Report.objects.get(pk=report_id)
