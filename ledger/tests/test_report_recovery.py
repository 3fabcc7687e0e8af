"""A report whose worker died is rebuilt by the periodic sweep, and lands once.

Killing the whole worker (not only its pool child) leaves its message unacknowledged in Redis
until the visibility timeout; beat's sweep (ledger.tasks.sweep_stale_reports) re-enqueues
reports left pending or running longer than REPORT_STALE_SECONDS, and the build is idempotent.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from datetime import timedelta
from pathlib import Path
from unittest import mock

import psycopg
import pytest
from django.test import TestCase, override_settings
from django.utils import timezone

from campaigns.models import Team
from campaigns.tests.factories import celery_eager, committed_campaign
from config.celery import app
from conftest import _database_url_for_worker, queued_messages, start_worker, stop_worker, wait_for
from ledger.models import Report, ReportStatus
from ledger.services import closing_reports
from ledger.services.closing_reports import build
from ledger.tasks import build_closing_report, sweep_stale_reports

ROOT = Path(__file__).resolve().parents[2]


class TheSweepPicksOnlyStaleReports(TestCase):
    @classmethod
    def setUpTestData(cls) -> None:
        cls.campaign = committed_campaign(Team.objects.create(name="sweep"))

    def report(self, status: str, age_seconds: float) -> Report:
        report = Report.objects.create(campaign=self.campaign)
        then = timezone.now() - timedelta(seconds=age_seconds)
        Report.objects.filter(pk=report.pk).update(status=status, created_at=then, started_at=then)
        return report

    @override_settings(REPORT_STALE_SECONDS=60)
    def test_it_rebuilds_reports_pending_or_running_longer_than_the_stale_time(self) -> None:
        stuck_pending = self.report(ReportStatus.PENDING, 61)
        stuck_running = self.report(ReportStatus.RUNNING, 3600)
        fresh_pending = self.report(ReportStatus.PENDING, 5)
        fresh_running = self.report(ReportStatus.RUNNING, 30)
        failed = self.report(ReportStatus.FAILED, 3600)
        with celery_eager():
            self.assertEqual(sweep_stale_reports.apply().get(), 2)
        statuses = dict(Report.objects.values_list("pk", "status"))
        self.assertEqual(statuses[stuck_pending.pk], ReportStatus.READY)
        self.assertEqual(statuses[stuck_running.pk], ReportStatus.READY)
        self.assertEqual(statuses[fresh_pending.pk], ReportStatus.PENDING)
        self.assertEqual(statuses[fresh_running.pk], ReportStatus.RUNNING)
        self.assertEqual(statuses[failed.pk], ReportStatus.FAILED)
        with celery_eager():
            self.assertEqual(sweep_stale_reports.apply().get(), 0)

    def test_a_run_finishing_after_another_landed_the_report_leaves_it_as_landed(self) -> None:
        report = Report.objects.create(campaign=self.campaign)
        real_collect = closing_reports.collect
        runs: list[str] = []
        landed: list[Report | None] = []

        def a_duplicate_lands_first(campaign):  # type: ignore[no-untyped-def]
            # While this run collects, another run of the same report (a redelivery, the
            # sweep) builds it completely.
            runs.append("collect")
            if len(runs) == 1:
                landed.append(build(report.pk))
            return real_collect(campaign)

        with mock.patch.object(closing_reports, "collect", a_duplicate_lands_first):
            build(report.pk)
        first = landed[0]
        assert first is not None
        self.assertEqual(first.status, ReportStatus.READY)
        final = Report.objects.get(pk=report.pk)
        self.assertEqual((final.status, final.finished_at), (ReportStatus.READY, first.finished_at))


def test_beat_runs_the_report_sweep() -> None:
    from django.conf import settings

    schedule = {
        entry["task"]: entry["schedule"] for entry in settings.CELERY_BEAT_SCHEDULE.values()
    }
    assert schedule["ledger.sweep_stale_reports"] > 0
    assert app.tasks["ledger.sweep_stale_reports"].name == sweep_stale_reports.name


def test_report_stale_seconds_must_be_a_positive_number_of_seconds() -> None:
    def check(value: str) -> subprocess.CompletedProcess[str]:
        env = {**os.environ, "REPORT_STALE_SECONDS": value}
        return subprocess.run(
            [sys.executable, "manage.py", "check"],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )

    assert check("0.5").returncode == 0
    for bad in ("0", "-5", "soon", "inf"):
        refused = check(bad)
        assert refused.returncode != 0, bad
        assert "REPORT_STALE_SECONDS must be a positive number of seconds" in refused.stderr


def busy(worker: subprocess.Popen[bytes]) -> bool:
    hostname = worker.hostname  # type: ignore[attr-defined]
    inspect = app.control.inspect(destination=[hostname], timeout=1.0)
    return bool((inspect.active() or {}).get(hostname) or (inspect.reserved() or {}).get(hostname))


@pytest.mark.postgres
@pytest.mark.celery_worker
@pytest.mark.django_db(transaction=True)
def test_a_report_whose_whole_worker_was_killed_mid_build_is_rebuilt_once_by_the_sweep() -> None:
    campaign = committed_campaign(Team.objects.create(name="nlp"))
    report = Report.objects.create(campaign=campaign)
    # Only the build goes to the doomed worker: a forecast recompute the commit enqueued would
    # read the campaign table and wait on the lock below instead.
    app.control.purge()

    doomed = start_worker()
    blocker = psycopg.connect(_database_url_for_worker())
    try:
        # Hold the campaign table: the build marks the report running (and commits that), then
        # waits to read the campaign: time enough to kill the worker mid-report.
        blocker.execute("LOCK TABLE campaigns_campaign IN ACCESS EXCLUSIVE MODE")
        build_closing_report.delay(report.pk)
        wait_for(lambda: Report.objects.filter(pk=report.pk, status="running").exists(), 60)
        # The whole worker, parent included: nobody is left to requeue the message.
        os.killpg(doomed.pid, signal.SIGKILL)
        doomed.wait(timeout=30)
    finally:
        blocker.rollback()
        blocker.close()
        stop_worker(doomed)

    fresh = start_worker()
    try:
        # The message sits unacknowledged until Redis's visibility timeout: the new worker
        # gets nothing, and the report stays running.
        time.sleep(2)
        assert not busy(fresh) and queued_messages() == 0
        assert Report.objects.get(pk=report.pk).status == ReportStatus.RUNNING

        # What beat runs every REPORT_SWEEP_SECONDS, once the report is stale.
        with override_settings(REPORT_STALE_SECONDS=0.5):
            assert sweep_stale_reports.apply().get() == 1
            ready = wait_for(
                lambda: Report.objects.filter(pk=report.pk, status__in=["ready", "failed"]).first(),
                timeout=60,
            )
            assert ready.status == ReportStatus.READY, ready.error
            assert ready.data["campaign"]["id"] == campaign.pk

            # Nothing left to sweep; a late duplicate of the message changes nothing. The
            # worker runs one task at a time in queue order: once a report enqueued after the
            # duplicate is ready, the duplicate has run.
            assert sweep_stale_reports.apply().get() == 0
            build_closing_report.delay(report.pk)
            later = Report.objects.create(campaign=campaign)
            build_closing_report.delay(later.pk)
            wait_for(lambda: Report.objects.filter(pk=later.pk, status="ready").exists(), 60)
    finally:
        stop_worker(fresh)
    final = Report.objects.get(pk=report.pk)
    assert (final.status, final.finished_at, final.html) == (
        ReportStatus.READY,
        ready.finished_at,
        ready.html,
    )
