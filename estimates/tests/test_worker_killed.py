"""A worker killed mid-recompute leaves the message to the next worker, which lands it once.

Its own module: it starts and kills its own workers, so no module-wide worker
(conftest.celery_worker) may be consuming the queue meanwhile.
"""

from __future__ import annotations

import os
import signal

import pytest
from django.conf import settings
from django.db import transaction

from campaigns.models import Campaign
from config.celery import app
from conftest import queued_messages, start_worker, stop_worker, wait_for
from estimates.models import Estimate
from estimates.tasks import recompute_forecast
from estimates.tests.test_worker import active_recompute, campaign, landed, row

pytestmark = [
    pytest.mark.postgres,
    pytest.mark.celery_worker,
    # Put the migration-seeded catalog back after the flush, for the tests that follow.
    pytest.mark.django_db(transaction=True),  # conftest.py re-seeds the catalog after a flush
]

__all__ = ["campaign"]  # the fixture


def test_a_worker_killed_mid_recompute_leaves_it_to_the_next_worker_which_lands_it_once(
    campaign: Campaign,
) -> None:
    version = row(campaign).input_version
    assert row(campaign).computed_version is None
    # The test holds the campaign's estimate row: the recompute computes, then waits on that lock
    # to land, which is time enough to kill it there (no test hook in the application code).
    with transaction.atomic():
        Estimate.objects.select_for_update().get(pk=row(campaign).pk)
        slow = start_worker()
        try:
            task = wait_for(lambda: active_recompute(slow, campaign.pk, version), timeout=60)
            assert task["args"] == [campaign.pk, version]
            # Stop this worker taking the message again, then kill the process running the task.
            app.control.cancel_consumer(
                settings.TASK_QUEUES["forecasts"], destination=[slow.hostname], reply=True
            )  # type: ignore[attr-defined]
            os.kill(task["worker_pid"], signal.SIGKILL)
            # acks_late + reject_on_worker_lost: the parent puts the message back on the queue.
            wait_for(lambda: queued_messages() >= 1, timeout=30)
        finally:
            stop_worker(slow)
    unlanded = row(campaign)
    assert (unlanded.status, unlanded.computed_version) == ("stale", None)

    fresh = start_worker()
    try:
        done = wait_for(lambda: landed(campaign), timeout=60)
        # A duplicate of the same message, delivered to the same worker, is a no-op.
        recompute_forecast.delay(campaign.pk, version)
        wait_for(
            lambda: (
                queued_messages() == 0
                and active_recompute(fresh, campaign.pk, reserved=True) is None
            )
        )
    finally:
        stop_worker(fresh)
    assert done.computed_version == version
    final = row(campaign)
    assert final.outputs["landings"] == 1
    assert final.computed_at == done.computed_at
    assert recompute_forecast.apply(args=(campaign.pk, version)).get() == "duplicate"
