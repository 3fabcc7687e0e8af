"""Periodic housekeeping for the campaigns app."""

from __future__ import annotations

import time
from datetime import timedelta

from celery import shared_task
from django.conf import settings
from django.utils import timezone

from campaigns.models import Run, Team
from campaigns.selectors import raw_points
from campaigns.services import idempotency, metric_packing, metric_store, run_lifecycle


@shared_task  # type: ignore[untyped-decorator]
def purge_idempotency_records() -> int:
    """Forget stored responses older than IDEMPOTENCY_RETENTION_HOURS; returns how many.

    A client retries within minutes; after the retention a replay with an old key is simply a
    new request. Idempotent: a second run finds nothing left to delete.
    """
    cutoff = timezone.now() - timedelta(hours=settings.IDEMPOTENCY_RETENTION_HOURS)
    return idempotency.purge_expired(older_than=cutoff)


@shared_task  # type: ignore[untyped-decorator]
def drop_old_metric_points() -> int:
    """Drop the raw metric points each team's retention says are too old, keeping their
    summaries and rollups (docs/domain.md §27); returns how many. Bounded transactions one
    after the other, so a stopped task keeps what it did and the next one goes on; until
    METRIC_RETENTION_SECONDS of work, then the next beat continues. Idempotent."""
    deadline = time.monotonic() + settings.METRIC_RETENTION_SECONDS
    now = timezone.now()
    total = 0
    teams = Team.objects.filter(metric_retention_days__isnull=False).values_list("pk", flat=True)
    for team_id in teams:
        while time.monotonic() < deadline:
            done = metric_store.drop_old_points(team_id=team_id, now=now)
            if not done:
                break
            total += done
    return total


@shared_task  # type: ignore[untyped-decorator]
def pack_run_points(run_pk: int) -> int:
    """Pack one run's points logged more than METRIC_PACK_AFTER_SECONDS ago into blocks
    (docs/metric_store.md §3 "Two tiers"); returns how many moved. Enqueued when the run
    finishes; the newest points stay hot until the beat's next pass (a retried batch is
    recognised among the hot rows). Idempotent: a second run finds nothing older to move."""
    horizon = timezone.now() - timedelta(seconds=settings.METRIC_PACK_AFTER_SECONDS)
    return metric_packing.pack_points(run_id=run_pk, older_than=horizon).points


@shared_task  # type: ignore[untyped-decorator]
def pack_metric_points() -> int:
    """Beat: pack the points logged more than METRIC_PACK_AFTER_SECONDS ago of every run
    holding some (running runs included), a transaction per run, until METRIC_PACK_SECONDS of
    work; the next beat goes on. Returns how many moved. Idempotent."""
    deadline = time.monotonic() + settings.METRIC_PACK_SECONDS
    horizon = timezone.now() - timedelta(seconds=settings.METRIC_PACK_AFTER_SECONDS)
    total = 0
    for run_pk in raw_points.runs_with_hot_points(older_than=horizon):
        if time.monotonic() >= deadline:
            break
        total += metric_packing.pack_points(run_id=run_pk, older_than=horizon).points
    return total


def pack_when_finished(sender: object, run: Run, **kwargs: object) -> None:
    """run_finished's receiver: the packing is enqueued once the finish commits (a broker
    that is down loses nothing: the beat packs the run later)."""
    pack_run_points.delay_on_commit(run.pk)


@shared_task  # type: ignore[untyped-decorator]
def sweep_orphan_artifact_files() -> int:
    """Periodic: delete upload files a killed worker left without a row (docs/domain.md §23);
    older than the longest upload and a margin, so none being received is touched."""
    from campaigns.services.artifact_files import sweep_orphan_files

    return sweep_orphan_files(older_than_seconds=settings.ARTIFACT_UPLOAD_SECONDS + 600)


@shared_task  # type: ignore[untyped-decorator]
def end_silent_runs() -> int:
    """Beat: end every unfinished run not heard from for RUN_SILENT_MULTIPLE × its heartbeat
    interval (and RUN_SILENT_MIN_SECONDS) as failed, its hours ending at its last heartbeat
    (docs/domain.md §5.8); returns how many. Idempotent: an ended run is not ended again."""
    return run_lifecycle.end_silent_runs()
