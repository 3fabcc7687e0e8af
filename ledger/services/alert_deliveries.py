"""The alert outbox's writes (docs/domain.md §19.5): rows opened with their alert, claimed by a
worker one at a time in the fair order `ledger.selectors.alert_deliveries` gives, sent by the
channel kind's transport (`ledger.transports`), and the outcome recorded after the send.

So a delivery is never lost (the row commits with the alert; a Redis restart loses at most the
message that would have woken a worker, and the beat's `ledger.retry_alert_deliveries` wakes
one), may be attempted twice (a worker that dies after sending: its claim expires after the
lease), and is retried only when a later attempt can succeed (`ledger.domain.alert_delivery`).
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from celery import current_app
from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from ledger import transports
from ledger.domain.alert_delivery import wait_seconds
from ledger.models import Alert, AlertChannel, AlertDelivery, DeliveryState
from ledger.operations import counters
from ledger.selectors import alert_deliveries as outbox


@transaction.atomic
def open_deliveries(*, alerts: Iterable[Alert], team_id: int) -> list[AlertDelivery]:
    """One row per alert and channel of the team that does not mute the alert's kind; a worker
    is woken once this commits (never failing the committer: the beat wakes one otherwise)."""
    channels = list(AlertChannel.objects.filter(team_id=team_id))
    rows = [
        AlertDelivery(alert=alert, channel=channel, team_id=team_id, kind=channel.kind)
        for alert in alerts
        for channel in channels
        if alert.kind not in (channel.muted_kinds or [])
    ]
    AlertDelivery.objects.bulk_create(rows)
    if rows:
        # By name: ledger.tasks calls this module, so it cannot be imported back.
        current_app.tasks["ledger.deliver_alerts"].delay_on_commit()
    return rows


def claim(pk: int, now: datetime) -> bool:
    """Take the row for this worker: one conditional UPDATE, so two workers never both do."""
    return bool(
        AlertDelivery.objects.filter(outbox.due(now), pk=pk).update(
            state=DeliveryState.SENDING, claimed_at=now, attempts=F("attempts") + 1
        )
    )


def claim_next(now: datetime) -> AlertDelivery | None:
    for pk in outbox.fair_due_ids(now):
        if claim(pk, now):
            return outbox.loaded(pk)
    return None


def _count(kind: str, outcome: str) -> None:
    # Once the outcome is stored; a counter never fails a delivery (Redis may be down).
    counters.add_after_commit([(("alert_deliveries", kind, outcome), 1)])


def record_outcome(
    delivery: AlertDelivery, error: Exception | None, status: int | None = None
) -> float | None:
    """Record how the attempt ended (after the send returned); seconds until the next attempt
    when it is to be retried, else None."""
    now = timezone.now()
    rows = AlertDelivery.objects.filter(pk=delivery.pk, state=DeliveryState.SENDING)
    status = getattr(error, "status", status)
    if error is None:
        rows.update(state=DeliveryState.SENT, sent_at=now, last_error="", last_status=status)
        _count(delivery.kind, "sent")
        return None
    text = f"{type(error).__name__}: {error}"[:2000]
    if isinstance(error, transports.Refused):
        rows.update(state=DeliveryState.REFUSED, last_error=f"refused: {error}"[:2000],
                    last_status=status)  # fmt: skip
        _count(delivery.kind, "refused")
        return None
    attempts = delivery.attempts
    if attempts >= int(getattr(settings, "ALERT_DELIVERY_MAX_ATTEMPTS", 8)):
        rows.update(state=DeliveryState.GAVE_UP, last_error=text, last_status=status)
        _count(delivery.kind, "gave_up")
        return None
    base = float(getattr(settings, "ALERT_WEBHOOK_BACKOFF", 30))
    wait = wait_seconds(attempts, base=base, retry_after=getattr(error, "retry_after", None))
    rows.update(
        state=DeliveryState.FAILED,
        last_error=text,
        last_status=status,
        next_attempt_at=now + timedelta(seconds=wait),
    )
    _count(delivery.kind, "failed")
    return wait


def attempt(delivery: AlertDelivery) -> str:
    """Send one claimed row through its channel's transport; its state afterwards."""
    error: Exception | None = None
    status: int | None = None
    try:
        if delivery.channel is None:
            raise transports.Refused("the channel was removed")
        status = transports.sender(delivery.kind)(delivery.channel, outbox.notice_for(delivery))
    except Exception as exc:  # any failure of a transport: recorded, retried if it may succeed
        error = exc
    record_outcome(delivery, error, status)
    return str(AlertDelivery.objects.values_list("state", flat=True).get(pk=delivery.pk))


@dataclass
class Round:
    """What one worker's round did: rows by their state afterwards."""

    states: Counter[str] = field(default_factory=Counter)
    more: bool = False  # due rows were left (the budget ran out)


def deliver_due(*, seconds: float = 30.0) -> Round:
    """Claim and send due rows, fairest first, for up to `seconds` of work."""
    done = Round()
    started = time.monotonic()
    while (delivery := claim_next(timezone.now())) is not None:
        done.states[attempt(delivery)] += 1
        if time.monotonic() - started > seconds:
            done.more = outbox.any_due(timezone.now())
            break
    return done
