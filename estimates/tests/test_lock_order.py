"""No deadlock between a plan write and the forecast it starts (issue 19, 6b; docs/domain.md §10).

The cycle the finding hit: commit (or reserving a lot) locked the campaign row FOR UPDATE, then
waited for the campaign's estimate row (to mark it stale); the forecast task held that estimate
row and inserted a new item's estimate, whose foreign key takes a KEY SHARE lock on the campaign
row, which FOR UPDATE blocks. The writes now lock plan rows FOR NO KEY UPDATE (they never change a
key), which a foreign-key check does not wait for: one order, campaign then estimates, and the
task never waits on the campaign row.

PostgreSQL only: SQLite has no row locks.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import pytest
from django.db import connection, connections, transaction

from campaigns.models import Campaign, LotReservation, Team
from campaigns.services.lots import reserve_lot
from campaigns.services.plans import commit_plan
from campaigns.tests.factories import make_plannable
from catalog.models import RentalPlan
from catalog.services import seed_catalog
from estimates import forecasts
from estimates.models import Estimate

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def _fresh_campaign(n: int) -> Campaign:
    if not RentalPlan.objects.exists():
        seed_catalog()
    campaign = make_plannable(Team.objects.create(name=f"team-{n}"))
    campaign.lots.create(plan=RentalPlan.objects.order_by("id").first(), quantity=1)
    return campaign


def _waiting_on_a_lock(pid: int) -> bool:
    with connections["default"].cursor() as cursor:
        cursor.execute("SELECT wait_event_type FROM pg_stat_activity WHERE pid = %s", [pid])
        row = cursor.fetchone()
    return bool(row and row[0] == "Lock")


def _commit(campaign: Campaign) -> None:
    commit_plan(campaign=campaign)


def _reserve(campaign: Campaign) -> None:
    reserve_lot(campaign=campaign, plan=RentalPlan.objects.order_by("-id").first(), quantity=1)


@pytest.mark.parametrize("write", [_commit, _reserve], ids=["commit", "reserve_lot"])
def test_a_write_waiting_on_the_forecast_does_not_deadlock_it(
    write: Callable[[Campaign], None],
) -> None:
    """Deterministic: the task side holds the estimate row (as land_forecast does) until the
    write waits for it, then inserts a new item's estimate (as land_forecast does)."""
    if connection.vendor != "postgresql":
        pytest.skip("row locks need PostgreSQL")
    campaign = _fresh_campaign(0)
    item = campaign.items.order_by("id").first()
    assert item is not None and not Estimate.objects.filter(item=item).exists()
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        writer_pid = cursor.fetchone()[0]
    holding = threading.Event()
    outcome: dict[str, Any] = {}

    def task_side() -> None:
        try:
            with transaction.atomic():
                Estimate.objects.select_for_update().get(campaign=campaign, item__isnull=True)
                holding.set()
                deadline = time.monotonic() + 10
                while not _waiting_on_a_lock(writer_pid) and time.monotonic() < deadline:
                    time.sleep(0.05)
                outcome["writer_waited"] = _waiting_on_a_lock(writer_pid)
                Estimate.objects.create(campaign=campaign, item=item)
            outcome["task"] = "landed"
        except Exception as exc:
            outcome["task"] = repr(exc)
        finally:
            connections.close_all()

    thread = threading.Thread(target=task_side)
    thread.start()
    assert holding.wait(10)
    try:
        write(campaign)
        outcome["write"] = "ok"
    except Exception as exc:
        outcome["write"] = repr(exc)
    thread.join(30)
    assert outcome["writer_waited"] is True
    assert (outcome["write"], outcome["task"]) == ("ok", "landed"), outcome


def test_commit_while_forecasts_run_many_times() -> None:
    """The real functions racing: each round a fresh plan, its forecast recomputed (landing
    new item estimates) while the plan is committed; every round both succeed."""
    if connection.vendor != "postgresql":
        pytest.skip("row locks need PostgreSQL")
    failures: list[str] = []
    for n in range(12):
        campaign = _fresh_campaign(n + 1)
        version = Estimate.objects.get(campaign=campaign, item__isnull=True).input_version
        start = threading.Barrier(2)

        def forecast(campaign_id: int = campaign.pk, v: int = version, start: Any = start) -> None:
            try:
                start.wait(5)
                forecasts.recompute(campaign_id, v)
            except Exception as exc:
                failures.append(f"forecast: {exc!r}")
            finally:
                connections.close_all()

        thread = threading.Thread(target=forecast)
        thread.start()
        try:
            start.wait(5)
            commit_plan(campaign=campaign)
        except Exception as exc:
            failures.append(f"commit: {exc!r}")
        thread.join(30)
    assert failures == []
    assert LotReservation.objects.count() == 12
    assert Campaign.objects.filter(status="committed").count() == 12
