"""Alerts delivered exactly once in effect (docs/domain.md §19.5): the outbox rows commit with
the alert, a broker outage loses nothing, `sent` is recorded after the send, a title cannot
break the e-mail header (nor silence the webhook), and every attempt of one delivery carries
the same id for the receiver to deduplicate on."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal
from typing import Any
from unittest import mock

import pytest
from django.core import mail
from django.utils import timezone
from kombu.exceptions import OperationalError

from campaigns.models import Team
from campaigns.tests.factories import celery_eager, committed_campaign, make_user
from ledger.models import Alert, AlertDelivery
from ledger.services.alerts import scan_alerts
from ledger.tasks import deliver_alert, retry_alert_deliveries
from ledger.tests.test_webhook_delivery import LOOPBACK_RECEIVER, Receiver, receiver

__all__ = ["receiver"]  # the fixture, shared with test_webhook_delivery


def _team(webhook: str) -> Team:
    team = Team.objects.create(name="nlp", webhook_url=webhook, webhook_secret="k")
    make_user("olga", team=team, role="owner", email="olga@example.org")
    return team


@pytest.mark.django_db
@LOOPBACK_RECEIVER
def test_a_newline_in_the_title_neither_breaks_the_mail_nor_silences_the_webhook(
    receiver: str, django_capture_on_commit_callbacks: Any
) -> None:
    campaign = committed_campaign(
        _team(receiver), budget=Decimal("40.00"), title="LoRA\r\nBcc: all@example.org"
    )
    with celery_eager(), django_capture_on_commit_callbacks(execute=True):
        raised = scan_alerts(campaign=campaign)
    assert len(raised) == 2
    assert len(mail.outbox) == 2 and len(Receiver.received) == 2
    message = mail.outbox[0]
    assert "\n" not in message.subject and "\r" not in message.subject
    assert "Bcc: all@example.org" in message.subject  # the text kept, as text
    assert message.bcc == []
    assert set(AlertDelivery.objects.values_list("state", flat=True)) == {"sent"}


@pytest.mark.django_db
@LOOPBACK_RECEIVER
def test_a_broker_outage_at_enqueue_loses_no_alert(
    receiver: str, django_capture_on_commit_callbacks: Any
) -> None:
    campaign = committed_campaign(_team(receiver), budget=Decimal("40.00"))
    refused = OperationalError("Error 111 connecting to 127.0.0.1:6379. Connection refused.")
    with (
        mock.patch.object(deliver_alert, "delay", side_effect=refused),
        django_capture_on_commit_callbacks(execute=True),
    ):
        raised = scan_alerts(campaign=campaign)  # the caller is not failed by the broker
    assert len(raised) == 2
    assert set(AlertDelivery.objects.values_list("state", flat=True)) == {"pending"}
    assert mail.outbox == [] and Receiver.received == []
    with celery_eager():
        assert retry_alert_deliveries.apply().get() == 2  # the beat scan, once Redis is back
    assert len(mail.outbox) == 2 and len(Receiver.received) == 2
    with celery_eager():
        assert retry_alert_deliveries.apply().get() == 0  # nothing twice
    assert len(mail.outbox) == 2 and len(Receiver.received) == 2


@pytest.mark.django_db
@LOOPBACK_RECEIVER
def test_sent_is_recorded_after_the_send(receiver: str) -> None:
    campaign = committed_campaign(_team(receiver), budget=Decimal("40.00"))
    with mock.patch.object(deliver_alert, "delay"):
        scan_alerts(campaign=campaign)
    alert = campaign.alerts.order_by("id").first()
    assert alert is not None
    with (
        mock.patch(
            "django.core.mail.backends.locmem.EmailBackend.send_messages",
            side_effect=ConnectionRefusedError("smtp down"),
        ),
        celery_eager(),
    ):
        deliver_alert.apply(args=[alert.pk])
    email = AlertDelivery.objects.get(alert=alert, channel="email")
    assert (email.state, email.sent_at, email.attempts) == ("failed", None, 1)
    assert "smtp down" in email.last_error
    # The webhook is its own channel: it went out regardless.
    assert AlertDelivery.objects.get(alert=alert, channel="webhook").state == "sent"
    AlertDelivery.objects.filter(pk=email.pk).update(next_attempt_at=timezone.now())
    assert deliver_alert.apply(args=[alert.pk]).get() == "email:sent webhook:sent"
    assert len(mail.outbox) == 1
    assert mail.outbox[0].extra_headers["X-Desk-Delivery"] == str(email.delivery_id)


@pytest.mark.django_db
@LOOPBACK_RECEIVER
def test_every_attempt_of_a_delivery_carries_one_id_and_a_dead_workers_claim_is_retried(
    receiver: str,
) -> None:
    campaign = committed_campaign(_team(receiver), budget=Decimal("40.00"))
    with mock.patch.object(deliver_alert, "delay"):
        raised = scan_alerts(campaign=campaign)
    first, second = sorted(raised, key=lambda a: a.pk)
    hook = AlertDelivery.objects.get(alert=first, channel="webhook")
    # A worker took it, POSTed, and was killed before recording: the claim outlives its lease.
    AlertDelivery.objects.filter(pk=hook.pk).update(
        state="sending", attempts=1, claimed_at=timezone.now() - timedelta(hours=1)
    )
    AlertDelivery.objects.filter(alert=second).update(state="sent")
    Receiver.fail_first = 1
    with celery_eager():
        retry_alert_deliveries.apply()  # 503 once, then retried (backoff 30 s: made due below)
    AlertDelivery.objects.filter(pk=hook.pk).update(next_attempt_at=timezone.now())
    with celery_eager():
        retry_alert_deliveries.apply()
    ids = {h["X-Desk-Delivery"] for h in Receiver.received}
    assert len(Receiver.received) == 2 and ids == {str(hook.delivery_id)}
    assert AlertDelivery.objects.get(pk=hook.pk).state == "sent"
    # Ids differ between channels and alerts: each is one delivery.
    assert len(set(AlertDelivery.objects.values_list("delivery_id", flat=True))) == 4


@pytest.mark.django_db
@LOOPBACK_RECEIVER
def test_a_delivery_is_given_up_after_the_set_number_of_attempts(receiver: str) -> None:
    team = Team.objects.create(name="t", webhook_url=receiver, webhook_secret="k")
    alert = Alert.objects.create(
        campaign=committed_campaign(team), kind="budget", key="budget:80", message="m"
    )
    hook = AlertDelivery.objects.create(alert=alert, channel="webhook", attempts=7)
    Receiver.fail_first = 1
    deliver_alert.apply(args=[alert.pk])
    hook.refresh_from_db()
    assert (hook.state, hook.attempts) == ("gave_up", 8)
    assert "503" in hook.last_error
