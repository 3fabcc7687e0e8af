"""Celery tasks of the estimates: thin wrappers that take ids and call `estimates.forecasts`.

Both tasks acknowledge late and requeue when the worker process dies (settings set this for every
task: CELERY_TASK_ACKS_LATE, CELERY_TASK_REJECT_ON_WORKER_LOST). That is safe because they are
idempotent: a recompute lands only if the version it was asked for is still the current input
version and has not landed yet, so a redelivered or duplicated message changes nothing.

Tasks import what they call inside their body: `estimates.forecasts` imports this module to
enqueue, so a module-level import back would make the two import each other.
"""

from __future__ import annotations

from celery import shared_task
from django.conf import settings


@shared_task(name="estimates.tasks.recompute_forecast")  # type: ignore[untyped-decorator]
def recompute_forecast(campaign_id: int, version: int) -> str:
    """Recompute the campaign's forecast for input version `version`; returns what happened."""
    from estimates import forecasts

    return forecasts.recompute(int(campaign_id), int(version))


@shared_task(name="estimates.tasks.sweep_stale_estimates")  # type: ignore[untyped-decorator]
def sweep_stale_estimates() -> int:
    """Periodic (CELERY_BEAT_SCHEDULE): re-enqueue forecasts stale longer than
    STALE_ESTIMATE_SECONDS, whose message was lost or whose worker died. Returns how many."""
    from estimates import forecasts

    due = forecasts.stale_estimates(settings.STALE_ESTIMATE_SECONDS)
    for campaign_id, version in due:
        recompute_forecast.delay(campaign_id, version)
    return len(due)
