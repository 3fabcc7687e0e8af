"""The alert outbox on a real Celery worker and Redis, with a real HTTP receiver (docs/domain.md
§19.5): every channel kind delivered by the worker, a failure retried by it with backoff, and a
wake-up message lost with Redis (its queue emptied, as a restart without persistence does) loses
no delivery: the beat's retry scan wakes a round."""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal

import pytest

from campaigns.services.teams import create_team
from campaigns.tests.factories import committed_campaign, make_user
from config.celery import app
from conftest import queued_messages, start_worker, stop_worker, wait_for
from ledger.models import AlertDelivery
from ledger.services.alert_channels import add_alert_channel
from ledger.services.alerts import scan_alerts
from ledger.tasks import retry_alert_deliveries
from ledger.tests.receiver import WORKER_ENV, Receiver, receiving

pytestmark = pytest.mark.celery_worker
SECRET = "whsec_" + "c2VjcmV0LWZvci10aGUtd29ya2Vy"


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    with receiving() as found:
        yield found


def _campaign(receiver: Receiver):  # type: ignore[no-untyped-def]
    team = create_team(name="nlp")
    make_user("olga", team=team, role="owner", email="olga@example.org")
    add_alert_channel(team=team, kind="webhook", target=receiver.url("/webhook"), secret=SECRET)
    add_alert_channel(team=team, kind="slack", target=receiver.url("/slack"))
    add_alert_channel(team=team, kind="teams", target=receiver.url("/teams"))
    return committed_campaign(team, budget=Decimal("40.00"))


def test_a_worker_delivers_every_channel_and_retries_a_failure_with_backoff(
    transactional_db: None, receiver: Receiver
) -> None:
    campaign = _campaign(receiver)
    receiver.answer("/slack", 503, 502)  # the first two Slack posts fail, then it answers
    worker = start_worker({**WORKER_ENV, "ALERT_WEBHOOK_BACKOFF": "0.2"})
    try:
        assert len(scan_alerts(campaign=campaign)) == 2  # enqueued on commit (autocommit)
        wait_for(lambda: AlertDelivery.objects.filter(state="sent").count() == 8, timeout=60)
    finally:
        stop_worker(worker)
    assert len(receiver.bodies("/slack")) == 4  # two failures, then each alert once
    attempts = AlertDelivery.objects.filter(kind="slack").values_list("attempts", flat=True)
    assert sorted(attempts) in ([1, 3], [2, 2])
    assert len(receiver.bodies("/webhook")) == len(receiver.bodies("/teams")) == 2


def test_a_wake_up_lost_with_redis_loses_no_delivery(
    transactional_db: None, receiver: Receiver
) -> None:
    campaign = _campaign(receiver)
    app.control.purge()
    assert len(scan_alerts(campaign=campaign)) == 2
    assert queued_messages() >= 1  # the round's wake-up, waiting for a worker
    app.control.purge()  # Redis restarted without its data: the message is gone
    assert queued_messages() == 0
    assert set(AlertDelivery.objects.values_list("state", flat=True)) == {"pending"}
    worker = start_worker(WORKER_ENV)
    try:
        # The beat's scan (run here: it only looks at the outbox and wakes a round on Redis).
        assert retry_alert_deliveries() == 1
        wait_for(lambda: AlertDelivery.objects.filter(state="sent").count() == 8, timeout=60)
    finally:
        stop_worker(worker)
    assert len(receiver.received) == 6  # each alert once on each of the three URLs
