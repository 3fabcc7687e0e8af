"""Delivering a stored alert (docs/domain.md §19): the outbox (`AlertDelivery`, one row per
channel, written with the alert by `ledger.services.alerts`), `deliver_due` claims, sends and
records each due row (`CHANNELS`: e-mail and webhook), and `due_alert_ids` is what the retry
scan re-enqueues. Called by the worker (`ledger.tasks.deliver_alert`); imports neither the
services nor the tasks.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import uuid
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.core.mail import EmailMessage
from django.db.models import F, Q
from django.utils import timezone

from campaigns import outbound
from campaigns.models import Team
from ledger.models import Alert, AlertDelivery, DeliveryState
from ledger.selectors.alerts import owner_emails


def alert_payload(alert: Alert) -> dict[str, Any]:
    campaign = alert.campaign
    return {
        "id": alert.pk,
        "campaign": {"id": campaign.pk, "title": campaign.title},
        "team": campaign.team_id,
        "kind": alert.kind,
        "message": alert.message,
        "raised_at": alert.raised_at.isoformat(),
        "resolved_at": alert.resolved_at.isoformat() if alert.resolved_at else None,
    }


def header_safe(text: str, limit: int = 200) -> str:
    """One line for a mail header: control characters (CR, LF, …) become spaces, so a campaign
    title cannot break the header (Django would raise BadHeaderError) or add one."""
    line = " ".join("".join(c if c.isprintable() else " " for c in text).split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def deliver_email(alert: Alert, delivery_id: uuid.UUID | None = None) -> int:
    """Send the alert to the team's owners with an address; how many were written to. The
    delivery id is the Message-ID (and X-Desk-Delivery): a repeat is recognisable."""
    to = owner_emails(alert.campaign.team_id)
    if not to:
        raise outbound.WebhookRefused("no owner of the team has an e-mail address")
    delivery_id = delivery_id or uuid.uuid4()
    EmailMessage(
        subject=header_safe(f"[Campaign Desk] {alert.get_kind_display()}: {alert.campaign.title}"),
        body=f"{alert.message}\n\nRaised {alert.raised_at:%Y-%m-%d %H:%M} UTC.",
        to=to,
        headers={
            "Message-ID": f"<{delivery_id}@campaign-desk>",
            "X-Desk-Delivery": str(delivery_id),
        },
    ).send()
    return len(to)


def signature(secret: str, body: bytes) -> str:
    """`sha256=<hex HMAC-SHA256 of the raw body>`, the X-Desk-Signature header."""
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def deliver_webhook(
    alert: Alert, url: str, secret: str, delivery_id: uuid.UUID | None = None
) -> int:
    """POST the alert as JSON, signed, through `campaigns.outbound` (public addresses only, no
    redirects, one deadline: ALERT_WEBHOOK_TIMEOUT seconds); the receiver's 2xx status.
    Raises WebhookRefused (never retried: the URL or its addresses are not allowed, or there is
    no secret to sign with) or DeliveryFailed (retried). X-Desk-Delivery is the same on every
    attempt of one alert's webhook delivery: the receiver deduplicates on it."""
    if not secret:
        raise outbound.WebhookRefused("the team's webhook has no secret to sign with")
    body = json.dumps(alert_payload(alert), sort_keys=True).encode()
    headers = {
        "Content-Type": "application/json",
        "User-Agent": "campaign-desk-alerts",
        "X-Desk-Signature": signature(secret, body),
        "X-Desk-Alert": str(alert.pk),
        "X-Desk-Delivery": str(delivery_id or uuid.uuid4()),
    }
    deadline = float(getattr(settings, "ALERT_WEBHOOK_TIMEOUT", 10))
    return outbound.post(url, body, headers, deadline=deadline).status


def _send_email(alert: Alert, delivery: AlertDelivery) -> None:
    deliver_email(alert, delivery.delivery_id)


def _send_webhook(alert: Alert, delivery: AlertDelivery) -> None:
    team = alert.campaign.team
    if not team.webhook_url:
        raise outbound.WebhookRefused("the team has no webhook any more")
    deliver_webhook(alert, team.webhook_url, team.webhook_secret, delivery.delivery_id)


# The channels (docs/domain.md §19.5): a name, when it applies to a team, and its sender. A
# sender raises WebhookRefused for "never retry" and anything else for "retry later".
EMAIL, WEBHOOK = "email", "webhook"
CHANNELS: dict[str, Callable[[Alert, AlertDelivery], None]] = {
    EMAIL: _send_email,
    WEBHOOK: _send_webhook,
}


def channels_for(team: Team) -> list[str]:
    """The channels an alert raised now is delivered on."""
    found = []
    if owner_emails(team.pk):
        found.append(EMAIL)
    if team.webhook_url:
        found.append(WEBHOOK)
    return found


# --- The outbox (docs/domain.md §19.5) -------------------------------------------------------


def _lease() -> timedelta:
    return timedelta(seconds=float(getattr(settings, "ALERT_DELIVERY_LEASE_SECONDS", 300)))


def due(now: datetime) -> Q:
    """Deliveries to attempt now: never tried or failed and due, or claimed by a worker that
    has not finished within the lease (it died: the receiver deduplicates the repeat)."""
    waiting = Q(state__in=[DeliveryState.PENDING, DeliveryState.FAILED], next_attempt_at__lte=now)
    abandoned = Q(state=DeliveryState.SENDING, claimed_at__lt=now - _lease())
    return waiting | abandoned


def due_alert_ids(now: datetime | None = None, limit: int = 1000) -> list[int]:
    now = now or timezone.now()
    ids = AlertDelivery.objects.filter(due(now)).order_by("alert_id").values_list("alert_id")
    return list(dict.fromkeys(pk for (pk,) in ids[:limit]))


def claim(delivery: AlertDelivery, now: datetime) -> bool:
    """Take the delivery for this worker: one conditional UPDATE, so two workers never both do."""
    return bool(
        AlertDelivery.objects.filter(due(now), pk=delivery.pk).update(
            state=DeliveryState.SENDING, claimed_at=now, attempts=F("attempts") + 1
        )
    )


def record_outcome(delivery: AlertDelivery, error: Exception | None) -> float | None:
    """Record how the attempt ended (after the send returned); seconds until the next attempt
    when it is to be retried (ALERT_WEBHOOK_BACKOFF × 2^(attempts − 1)), else None."""
    now = timezone.now()
    rows = AlertDelivery.objects.filter(pk=delivery.pk, state=DeliveryState.SENDING)
    if error is None:
        rows.update(state=DeliveryState.SENT, sent_at=now, last_error="")
        return None
    text = f"{type(error).__name__}: {error}"[:2000]
    if isinstance(error, outbound.WebhookRefused):
        rows.update(state=DeliveryState.REFUSED, last_error=f"refused: {error}"[:2000])
        return None
    attempts = AlertDelivery.objects.get(pk=delivery.pk).attempts
    if attempts >= int(getattr(settings, "ALERT_DELIVERY_MAX_ATTEMPTS", 8)):
        rows.update(state=DeliveryState.GAVE_UP, last_error=text)
        return None
    wait = float(getattr(settings, "ALERT_WEBHOOK_BACKOFF", 30)) * 2.0 ** (int(attempts) - 1)
    rows.update(
        state=DeliveryState.FAILED, last_error=text, next_attempt_at=now + timedelta(seconds=wait)
    )
    return wait


def deliver_due(alert: Alert) -> tuple[dict[str, str], float | None]:
    """Attempt each of the alert's due deliveries once: each channel's state afterwards, and
    the shortest wait before one is to be retried (None: nothing to retry)."""
    waits: list[float] = []
    states: dict[str, str] = {}
    for delivery in alert.deliveries.all():
        if claim(delivery, timezone.now()):
            sender = CHANNELS.get(delivery.channel)
            error: Exception | None = None
            try:
                if sender is None:
                    raise outbound.WebhookRefused(f"no channel named {delivery.channel!r}")
                sender(alert, delivery)
            except Exception as exc:  # any failure of the channel: recorded, then retried
                error = exc
            wait = record_outcome(delivery, error)
            if wait is not None:
                waits.append(wait)
        states[delivery.channel] = AlertDelivery.objects.get(pk=delivery.pk).state
    return states, (min(waits) if waits else None)
