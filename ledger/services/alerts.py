"""Storing and resolving alerts, and raising run events (docs/domain.md §19). Every way an
alert is born ends in `raise_alert`, which stores it with one outbox row per channel of its
team that does not mute its kind (`alert_deliveries.open_deliveries`), in one transaction:
the scan of a campaign (`scan_alerts`, the beat per campaign), the team-budget scan
(`ledger.services.team_budget_alerts`), and the run events the campaigns app announces (a run
stopped, failed or finished: `raise_run_event`, from `ledger.signals`).
"""

from __future__ import annotations

from datetime import datetime

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from campaigns.models import Campaign, Run, RunStatus
from campaigns.services import ingest, run_lifecycle
from ledger.domain import alerts
from ledger.models import Alert
from ledger.selectors.alerts import campaign_facts, idle_rule
from ledger.services.alert_deliveries import open_deliveries


def limits() -> alerts.Limits:
    return alerts.Limits(lot_hours=float(getattr(settings, "ALERT_LOT_HOURS", 12)))


@transaction.atomic
def raise_alert(
    *,
    campaign: Campaign,
    condition: alerts.Condition,
    run: Run | None = None,
    now: datetime | None = None,
) -> Alert | None:
    """Store an alert and its outbox rows; None when the same condition is already open (the
    partial unique constraint is the last word when two scans race; the savepoint keeps the
    caller's transaction usable). An event is stored resolved: it does not hold."""
    kind = alerts.KINDS.get(condition.kind)
    resolved = (now or timezone.now()) if kind is not None and kind.event else None
    try:
        with transaction.atomic():
            alert = Alert.objects.create(
                campaign=campaign,
                kind=condition.kind,
                key=condition.key,
                message=condition.message,
                run=run,
                resolved_at=resolved,
            )
    except IntegrityError:
        return None
    open_deliveries(alerts=[alert], team_id=campaign.team_id)
    return alert


@transaction.atomic
def scan_alerts(*, campaign: Campaign, now: datetime | None = None) -> list[Alert]:
    """Store each condition that holds and has no open alert yet, resolve the open alerts whose
    condition no longer holds; the new ones are delivered once this commits."""
    now = now or timezone.now()
    found = alerts.conditions(campaign_facts(campaign, now), limits())
    holding = {(c.kind, c.key) for c in found}
    open_alerts = {
        (a.kind, a.key): a.pk for a in Alert.objects.filter(campaign=campaign, resolved_at=None)
    }
    ended = [pk for key, pk in open_alerts.items() if key not in holding]
    Alert.objects.filter(pk__in=ended, resolved_at=None).update(resolved_at=now)
    raised = [
        raise_alert(campaign=campaign, condition=condition, now=now)
        for condition in found
        if (condition.kind, condition.key) not in open_alerts
    ]
    _stop_idle_runs(campaign, [c for c in found if c.kind == "idle_gpu"])
    return [alert for alert in raised if alert is not None]


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
            run_lifecycle.stop_run(run=run, reason=reason, rule=rule)
        except ingest.RunRefused:
            continue  # stopped or finished meanwhile: nothing left to stop


def _event(run: Run) -> alerts.RunEvent:
    status = "stopped" if run.status == RunStatus.STOPPED else str(run.status)
    reason = run.stop_reason
    if run.stop_rule is not None:
        reason = f"rule #{run.stop_rule_id} ({run.stop_rule.get_kind_display()}): {reason}"
    hours = run.observed_hours if run.observed_hours is not None else None
    return alerts.RunEvent(
        run_id=run.run_id,
        item=run.variant.name if run.variant is not None else "",
        status=status,
        reason=reason or "no reason given",
        hours=f"{hours:.2f}" if hours is not None else "",
    )


@transaction.atomic
def raise_run_event(*, run: Run, finished: bool = False) -> Alert | None:
    """A run was stopped (by a rule or a person), or finished (completed or failed): tell the
    team. A stopped run that then finishes was already told of at its stop."""
    if finished and run.status == RunStatus.STOPPED:
        return None
    condition = alerts.run_event_condition(_event(run))
    return raise_alert(campaign=run.campaign, condition=condition, run=run)
