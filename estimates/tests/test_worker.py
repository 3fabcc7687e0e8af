"""Recomputes through a real Celery worker on Redis and PostgreSQL (skipped on SQLite).

The data is committed (transactional_db), so the plan's signals enqueue real messages; the
worker runs as a separate process on the test database (conftest.start_worker).
"""

from __future__ import annotations

import subprocess
from datetime import timedelta
from typing import Any

import pytest
from django.conf import settings
from django.db import transaction
from django.utils import timezone

from campaigns.models import Campaign, PlannedItem, Team
from campaigns.services.items import amend_item
from campaigns.tests.factories import make_plannable, pilot
from catalog.services import seed_catalog
from config.celery import app
from conftest import wait_for
from estimates import forecasts
from estimates.models import Estimate
from estimates.tasks import recompute_forecast, sweep_stale_estimates

pytestmark = [
    pytest.mark.postgres,
    pytest.mark.celery_worker,
    # Put the migration-seeded catalog back after the flush, for the tests that follow.
    pytest.mark.django_db(transaction=True),  # conftest.py re-seeds the catalog after a flush
]


def row(campaign: Campaign) -> Estimate:
    return Estimate.objects.get(campaign=campaign, item__isnull=True)


def landed(campaign: Campaign) -> Estimate | None:
    estimate = row(campaign)
    fresh = estimate.status == "fresh" and estimate.computed_version == estimate.input_version
    return estimate if fresh else None


def active_recompute(
    worker: subprocess.Popen[bytes],
    campaign_id: int,
    version: int | None = None,
    *,
    reserved: bool = False,
) -> dict[str, Any] | None:
    """The recompute of `campaign_id` (at `version`, if given) the worker is running or, with
    reserved, holding. Superseded versions run for milliseconds; `version` skips them."""
    hostname = worker.hostname  # type: ignore[attr-defined]
    inspect = app.control.inspect(destination=[hostname], timeout=1.0)
    tasks = list((inspect.active() or {}).get(hostname, []))
    if reserved:
        tasks += (inspect.reserved() or {}).get(hostname, [])
    for task in tasks:
        if task["name"] != recompute_forecast.name or task["args"][0] != campaign_id:
            continue
        if version is None or task["args"][1] == version:
            return dict(task)
    return None


@pytest.fixture
def campaign(transactional_db: None) -> Campaign:
    seed_catalog()
    # Messages left by earlier tests name campaigns that no longer exist; start clean.
    app.control.purge()
    return make_plannable(Team.objects.create(name="nlp"))


def test_a_plan_change_is_recomputed_by_the_worker_and_a_pilot_switches_it_to_pilot(
    campaign: Campaign, celery_worker: subprocess.Popen[bytes]
) -> None:
    first = wait_for(lambda: landed(campaign))
    assert first.time_source == "assumed"
    assert first.outputs["totals"]["forecast_hours"] == 22.0

    baseline = campaign.items.get(name="baseline")
    amend_item(item=baseline, config={"assumed_tokens_per_second": 2000})
    pilot(baseline, tokens_per_second=1000)

    def switched() -> Estimate | None:
        estimate = landed(campaign)
        return estimate if estimate is not None and estimate.time_source == "pilot" else None

    after = wait_for(switched)
    assert after.computed_version > first.computed_version
    item = Estimate.objects.get(item=baseline)
    assert (item.time_source, item.outputs["forecast_hours"]) == ("pilot", 20.0)


def test_the_sweep_rescues_a_forecast_whose_message_was_lost(
    campaign: Campaign, celery_worker: subprocess.Popen[bytes]
) -> None:
    before = wait_for(lambda: landed(campaign))
    # A plan change whose message never reached the broker: bump without enqueueing.
    PlannedItem.objects.filter(pk=campaign.items.get(name="variant A").pk).update(planned_hours=30)
    with transaction.atomic():
        forecasts._bump(campaign.pk, create=False)
    long_ago = timezone.now() - timedelta(seconds=settings.STALE_ESTIMATE_SECONDS + 60)
    Estimate.objects.filter(campaign=campaign).update(stale_since=long_ago)
    assert row(campaign).status == "stale"

    # What beat runs every STALE_SWEEP_SECONDS; the recompute it enqueues goes to the worker.
    assert sweep_stale_estimates.apply().get() == 1
    after = wait_for(lambda: landed(campaign))
    assert after.computed_version == before.computed_version + 1
    variant = next(i for i in after.outputs["items"] if i["name"] == "variant A")
    assert variant["forecast_hours"] == 30.0
