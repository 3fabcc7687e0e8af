"""Storing and resolving alerts (docs/domain.md §19): `scan_alerts` is the one scan, called per
campaign by the beat task (`ledger.tasks`) and by anyone who wants a campaign scanned now.

Delivering a new alert is a worker's job: once the scan's transaction has committed,
`alert_raised` is sent and `ledger.signals` enqueues the delivery (`ledger.tasks.deliver_alert`).
Through the signal, not an import: the tasks call this module, so it cannot import them back.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.dispatch import Signal
from django.utils import timezone

from campaigns.models import Campaign, Run, RunStatus
from campaigns.services import ingest
from ledger.alert_delivery import channels_for
from ledger.domain import alerts
from ledger.models import Alert, AlertDelivery
from ledger.selectors.alerts import campaign_facts, idle_rule

# Sent with `alert_id` once the alert's row is committed.
alert_raised = Signal()


def scan_alerts(*, campaign: Campaign, now: Any = None) -> list[Alert]:
    """Store the campaign's new alerts and resolve those whose condition ended (one
    transaction), then have each new one delivered by email and webhook on a worker, once the
    transaction has committed."""
    with transaction.atomic():
        raised = _store_alerts(campaign, now)
        for alert in raised:
            transaction.on_commit(_announce(alert.pk))
    return raised


def _announce(alert_id: int) -> Any:
    return lambda: alert_raised.send(sender=Alert, alert_id=alert_id)


@transaction.atomic
def _store_alerts(campaign: Campaign, now: datetime | None = None) -> list[Alert]:
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
        stored = store_new_alert(
            campaign=campaign, kind=condition.kind, key=condition.key, message=condition.message
        )
        if stored is not None:
            raised.append(stored)
    _stop_idle_runs(campaign, [c for c in found if c.kind == "idle_gpu"])
    # The outbox: one delivery row per channel, committed with its alert (docs/domain.md §19.5).
    channels = channels_for(campaign.team) if raised else []
    AlertDelivery.objects.bulk_create(
        AlertDelivery(alert=alert, channel=channel) for alert in raised for channel in channels
    )
    return raised


def store_new_alert(*, campaign: Campaign, kind: str, key: str, message: str) -> Alert | None:
    """Store an open alert, or None when a racing scan stored the same one first: the partial
    unique constraint (one open alert per campaign, kind and key) is the last word, and the
    savepoint keeps the caller's transaction usable."""
    try:
        with transaction.atomic():
            return Alert.objects.create(campaign=campaign, kind=kind, key=key, message=message)
    except IntegrityError:
        return None


def _stop_idle_runs(campaign: Campaign, idle: list[alerts.Condition]) -> None:
    """With an idle-GPU stop rule, stop each run whose GPUs were idle for its window (the rule's
    grace applies, docs/domain.md §4.6); the condition's words are the stop's reason."""
    rule = idle_rule(campaign.pk) if idle else None
    if rule is None:
        return
    run_ids = [c.key.removeprefix("run:").removesuffix(":idle") for c in idle]
    runs = Run.objects.filter(campaign=campaign, run_id__in=run_ids, status=RunStatus.RUNNING)
    for run in runs:
        message = next(c.message for c in idle if c.key == f"run:{run.run_id}:idle")
        reason = f"{message} (rule #{rule.pk}: idle GPU)"
        try:
            ingest.stop_run(run, reason=reason, rule=rule)
        except ingest.RunRefused:
            continue  # stopped or finished meanwhile: nothing left to stop
