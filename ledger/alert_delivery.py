"""Delivering a stored alert (docs/domain.md §19): `deliver_email` and `deliver_webhook` send
it, and `mark_emailed`/`record_webhook_attempt` record that it was, so a retried delivery never
sends the email twice. Called by the worker (`ledger.tasks.deliver_alert`); imports neither the
services nor the tasks.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import urllib.request
from typing import Any

from django.conf import settings
from django.core.mail import send_mail
from django.db.models import F
from django.utils import timezone

from ledger.models import Alert
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


def deliver_email(alert: Alert) -> int:
    """Send the alert to the team's owners with an address; how many were written to."""
    to = owner_emails(alert.campaign.team_id)
    if not to:
        return 0
    send_mail(
        subject=f"[Campaign Desk] {alert.get_kind_display()}: {alert.campaign.title}",
        message=f"{alert.message}\n\nRaised {alert.raised_at:%Y-%m-%d %H:%M} UTC.",
        from_email=None,
        recipient_list=to,
    )
    return len(to)


def signature(secret: str, body: bytes) -> str:
    """`sha256=<hex HMAC-SHA256 of the raw body>`, the X-Desk-Signature header."""
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def deliver_webhook(alert: Alert, url: str, secret: str) -> int:
    """POST the alert as JSON, signed; the receiver's status (raises on failure or non-2xx)."""
    body = json.dumps(alert_payload(alert), sort_keys=True).encode()
    request = urllib.request.Request(
        url,
        data=body,
        method="POST",
        headers={
            "Content-Type": "application/json",
            "User-Agent": "campaign-desk-alerts",
            "X-Desk-Signature": signature(secret, body),
            "X-Desk-Alert": str(alert.pk),
        },
    )
    timeout = float(getattr(settings, "ALERT_WEBHOOK_TIMEOUT", 10))
    with urllib.request.urlopen(request, timeout=timeout) as answer:
        return int(answer.status)


def mark_emailed(alert: Alert) -> bool:
    """Record the email as sent, once: False when another delivery got there first."""
    return bool(
        Alert.objects.filter(pk=alert.pk, emailed_at=None).update(emailed_at=timezone.now())
    )


def record_webhook_attempt(alert: Alert, *, error: str = "") -> None:
    Alert.objects.filter(pk=alert.pk).update(
        webhook_attempts=F("webhook_attempts") + 1,
        webhook_error=error[:2000],
        webhook_delivered_at=None if error else timezone.now(),
    )
