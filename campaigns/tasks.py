"""Periodic housekeeping for the campaigns app."""

from __future__ import annotations

import time
from datetime import timedelta

from celery import shared_task
from django.conf import settings
from django.utils import timezone

from campaigns.models import IdempotencyRecord, Team
from campaigns.services import metric_store


@shared_task(acks_late=True, reject_on_worker_lost=True)  # type: ignore[untyped-decorator]
def purge_idempotency_records() -> int:
    """Forget stored responses older than IDEMPOTENCY_RETENTION_HOURS; returns how many.

    A client retries within minutes; after the retention a replay with an old key is simply a
    new request. Idempotent: a second run finds nothing left to delete.
    """
    cutoff = timezone.now() - timedelta(hours=settings.IDEMPOTENCY_RETENTION_HOURS)
    deleted, _ = IdempotencyRecord.objects.filter(created_at__lt=cutoff).delete()
    return deleted


@shared_task(acks_late=True, reject_on_worker_lost=True)  # type: ignore[untyped-decorator]
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
