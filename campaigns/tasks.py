"""Periodic housekeeping for the campaigns app."""

from __future__ import annotations

from datetime import timedelta

from celery import shared_task
from django.conf import settings
from django.utils import timezone

from campaigns.models import IdempotencyRecord


@shared_task(acks_late=True, reject_on_worker_lost=True)  # type: ignore[untyped-decorator]
def purge_idempotency_records() -> int:
    """Forget stored responses older than IDEMPOTENCY_RETENTION_HOURS; returns how many.

    A client retries within minutes; after the retention a replay with an old key is simply a
    new request. Idempotent: a second run finds nothing left to delete.
    """
    cutoff = timezone.now() - timedelta(hours=settings.IDEMPOTENCY_RETENTION_HOURS)
    deleted, _ = IdempotencyRecord.objects.filter(created_at__lt=cutoff).delete()
    return deleted
