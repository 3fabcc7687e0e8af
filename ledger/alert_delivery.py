"""Reading what the alert scan needs, and delivering an alert (docs/domain.md §19).

`campaign_facts` gathers one campaign's facts for the pure
`ledger.domain.alert_conditions.conditions` in a
fixed number of queries; `store_alerts` stores and resolves (called by `ledger.services.
scan_alerts`, which enqueues the deliveries, and by the beat task); `deliver_email` and
`deliver_webhook` send one stored alert, and the `mark_*`/`record_*` functions record that it
was. This module imports neither the services nor the tasks: both call it.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.core.mail import send_mail
from django.db import IntegrityError, transaction
from django.db.models import Count, F, Max, Min
from django.utils import timezone

from campaigns import outbound
from campaigns.models import (
    Campaign,
    Checkpoint,
    Membership,
    MetricPoint,
    Role,
    Run,
    RunStatus,
)
from estimates.models import Estimate
from ledger.domain import alert_conditions as alerts
from ledger.models import Alert
from ledger.selectors import spend


def campaign_facts(campaign: Campaign, now: datetime) -> alerts.CampaignFacts:
    lots = []
    for lot in campaign.lots.select_related("plan").order_by("id"):
        start = lot.start or campaign.committed_at
        if start is None:
            continue
        end = start + timedelta(hours=float(lot.plan.duration_hours))
        lots.append(alerts.LotEnd(f"lot:{lot.pk}", f"lot {lot.plan.provider} {lot.plan.name}", end))
    running = tuple(
        Run.objects.filter(
            campaign=campaign, status=RunStatus.RUNNING, finished_at__isnull=True
        ).values_list("run_id", flat=True)
    )
    checkpoint = (
        Checkpoint.objects.filter(run__campaign=campaign, resume_verified=True)
        .select_related("run")
        .order_by("-created_at", "-id")
        .first()
    )
    latest = (
        alerts.LatestCheckpoint(
            f"checkpoint:{checkpoint.pk}",
            checkpoint.run.run_id,
            checkpoint.step,
            checkpoint.location,
            checkpoint.retrieved,
        )
        if checkpoint is not None
        else None
    )
    outputs = (
        Estimate.objects.filter(campaign=campaign, item__isnull=True)
        .values_list("outputs", flat=True)
        .first()
    )
    over = (outputs or {}).get("over_hours") if isinstance(outputs, dict) else None
    activity = tuple(
        alerts.RunActivity(run_id, count, first, last)
        for run_id, count, first, last in MetricPoint.objects.filter(
            run__campaign=campaign, run__run_id__in=running
        )
        .values("run__run_id")
        .annotate(n=Count("id"), first=Min("created_at"), last=Max("created_at"))
        .values_list("run__run_id", "n", "first", "last")
    )
    return alerts.CampaignFacts(
        now=now,
        currency=campaign.currency,
        lots=tuple(lots),
        running_runs=running,
        latest_checkpoint=latest,
        spent=spend.campaign_spend(campaign, now) if campaign.budget is not None else None,
        budget=campaign.budget,
        over_hours=float(over) if isinstance(over, int | float) else None,
        activity=activity,
    )


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


def owner_emails(team_id: int) -> list[str]:
    return sorted(
        {
            email
            for email in Membership.objects.filter(team_id=team_id, role=Role.OWNER).values_list(
                "user__email", flat=True
            )
            if email
        }
    )


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
    """POST the alert as JSON, signed, through `campaigns.outbound` (public addresses only, no
    redirects, one deadline: ALERT_WEBHOOK_TIMEOUT seconds); the receiver's 2xx status.
    Raises WebhookRefused (never retried: the URL or its addresses are not allowed, or there is
    no secret to sign with) or DeliveryFailed (retried)."""
    if not secret:
        raise outbound.WebhookRefused("the team's webhook has no secret to sign with")
    body = json.dumps(alert_payload(alert), sort_keys=True).encode()
    headers = {
        "Content-Type": "application/json",
        "User-Agent": "campaign-desk-alerts",
        "X-Desk-Signature": signature(secret, body),
        "X-Desk-Alert": str(alert.pk),
    }
    deadline = float(getattr(settings, "ALERT_WEBHOOK_TIMEOUT", 10))
    return outbound.post(url, body, headers, deadline=deadline).status


@transaction.atomic
def store_alerts(campaign: Campaign, now: datetime | None = None) -> list[Alert]:
    """Store each condition that holds and has no open alert yet; resolve the open alerts whose
    condition no longer holds. The partial unique constraint (one open alert per campaign, kind
    and key) is the last word when two scans race: the loser stores nothing."""
    now = now or timezone.now()
    found = alerts.conditions(
        campaign_facts(campaign, now),
        lot_hours=float(getattr(settings, "ALERT_LOT_HOURS", 12)),
    )
    open_alerts = {
        (a.kind, a.key): a for a in Alert.objects.filter(campaign=campaign, resolved_at=None)
    }
    holding = {(c.kind, c.key) for c in found}
    for key, alert in open_alerts.items():
        if key not in holding:
            Alert.objects.filter(pk=alert.pk, resolved_at=None).update(resolved_at=now)
    raised = []
    for condition in found:
        if (condition.kind, condition.key) in open_alerts:
            continue
        try:
            with transaction.atomic():
                raised.append(
                    Alert.objects.create(
                        campaign=campaign,
                        kind=condition.kind,
                        key=condition.key,
                        message=condition.message,
                    )
                )
        except IntegrityError:
            continue
    return raised


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
