"""Campaigns: create, edit, close (docs/domain.md §3, §15), and the two helpers every plan
service shares: the campaign's row lock and the person an action records.

Each action is a plain, `@transaction.atomic`, keyword-only function raising the domain's
exceptions (`PlanFrozen`, `CampaignClosed`, Django's `ValidationError` naming the field). The
admin (forms, inlines, actions) and the API views both call these functions and nothing else
writes these models, so the two can never disagree. Where a form must show a refusal beside
its field before anything is written, it calls the action's `check_*` function, which the
action itself calls first: each rule is written once.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from campaigns import events
from campaigns.models import Campaign, CampaignStatus, PlanFrozen, Run, RunsStillRunning, RunStatus
from campaigns.services.run_events import announce_run_save

# What a committed plan still lets change: the plan itself is frozen (docs/domain.md §3).
EDITABLE_AFTER_COMMIT = frozenset({"expected_deliverables"})
# The campaign's own fields a forecast reads: a change of another (a title) moves nothing.
FORECAST_FIELDS = ("window_hours", "budget", "currency", "status")


def lock_campaign(campaign: Campaign) -> Campaign:
    """The campaign's row, locked for this transaction."""
    # FOR NO KEY UPDATE, not FOR UPDATE: the writers still queue behind each other, but the
    # foreign-key checks of rows referencing the campaign (the forecast task inserting an item's
    # estimate while it holds the estimate row) do not wait for it. With FOR UPDATE, a commit
    # waiting for the estimate row and the task waiting for the campaign row deadlocked.
    # One order for everyone: campaign (or plan row) first, then its estimates.
    return Campaign.objects.select_for_update(no_key=True).get(pk=campaign.pk)


def real_user(user: object) -> User | None:
    """A real user row, or None (an ingest key or an anonymous caller records no one)."""
    return user if isinstance(user, User) and user.pk else None


@transaction.atomic
def create_campaign(*, acting_user: User | None = None, **fields: Any) -> Campaign:
    """A new draft campaign; `fields` are the model's (team, title, question, corpus_…)."""
    campaign = Campaign(created_by=real_user(acting_user), **fields)
    campaign.full_clean()
    campaign.save()
    events.emit(events.PLAN_CHANGED, campaign_id=campaign.pk)
    return campaign


def check_campaign_change(campaign: Campaign, changed: Iterable[str]) -> None:
    """Refuse changes the campaign's state forbids: after commit the plan is frozen."""
    campaign.refuse_if_closed()
    frozen = sorted(set(changed) - EDITABLE_AFTER_COMMIT)
    if not campaign.is_draft and frozen:
        raise PlanFrozen(
            f"the campaign is {campaign.status}: its plan is frozen ({', '.join(frozen)} "
            "cannot change)"
        )


@transaction.atomic
def update_campaign(
    *, campaign: Campaign, acting_user: User | None = None, **changes: Any
) -> Campaign:
    """Edit a draft campaign (after commit only what the plan does not freeze)."""
    locked = lock_campaign(campaign)
    changed = [f for f, v in changes.items() if getattr(locked, f) != v]
    check_campaign_change(locked, changed)
    moves_forecast = bool(set(changed) & set(FORECAST_FIELDS))
    for field, value in changes.items():
        setattr(locked, field, value)
    locked.full_clean()
    locked.save()
    if moves_forecast:
        events.emit(events.PLAN_CHANGED, campaign_id=locked.pk)
    return locked


def check_close(campaign: Campaign, *, conclusion: str, stop_running: bool = False) -> None:
    """Refuse a close the campaign's state forbids (docs/domain.md §15)."""
    if campaign.status == CampaignStatus.DRAFT:
        raise PlanFrozen("a draft campaign cannot be closed: commit its plan first")
    if campaign.status == CampaignStatus.CLOSED:
        raise PlanFrozen("the campaign is already closed")
    if not (conclusion or "").strip():
        raise ValidationError(
            {"conclusion": "say what the campaign concluded (a negative result is a conclusion)"}
        )
    running = list(
        campaign.runs.filter(status=RunStatus.RUNNING)
        .order_by("run_id")
        .values_list("run_id", flat=True)
    )
    if running and not stop_running:
        raise RunsStillRunning(running)


@transaction.atomic
def close_campaign(
    *,
    campaign: Campaign,
    acting_user: User | None = None,
    conclusion: str,
    stop_running: bool = False,
) -> Campaign:
    """Close the campaign with its conclusion; running runs refuse it unless `stop_running`,
    which stops them with a reason naming the close (a dead machine never finishes its runs)."""
    locked = lock_campaign(campaign)
    # The campaign's runs are locked too: a metric batch waiting on one of them sees the
    # campaign closed once this commits, never a half-closed campaign.
    list(Run.objects.select_for_update().filter(campaign=locked).values_list("pk", flat=True))
    check_close(locked, conclusion=conclusion, stop_running=stop_running)
    now = timezone.now()
    who = real_user(acting_user)
    by = f" by {who.get_username()}" if who is not None else ""
    for run in Run.objects.filter(campaign=locked, status=RunStatus.RUNNING):
        run.status = RunStatus.STOPPED
        run.stop_reason = f"stopped when the campaign was closed{by} at {now:%Y-%m-%d %H:%M} UTC"
        run.stop_step = run.last_step
        run.stopped_at = now
        run.save(update_fields=["status", "stop_reason", "stop_step", "stopped_at"])
        announce_run_save(run, ["status"])
    locked.status = CampaignStatus.CLOSED
    locked.conclusion = conclusion.strip()
    locked.closed_at = now
    locked.closed_by = who
    locked.save(update_fields=["status", "conclusion", "closed_at", "closed_by", "updated_at"])
    events.emit(events.PLAN_CHANGED, campaign_id=locked.pk)
    return locked
