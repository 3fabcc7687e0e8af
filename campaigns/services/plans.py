"""The plan: committing it (the baseline frozen, docs/domain.md §3) and the rule every row of a
draft plan keeps (stop rules, stages and lots are written while drafting, frozen at commit).

Upper layers hear of the commit through campaigns/signals.py, sent inside its transaction: the
ledger refuses a commit over the team's budget and posts the reserved lots.
"""

from __future__ import annotations

from typing import Any, TypeVar

from django.contrib.auth.models import User
from django.db import models, transaction
from django.utils import timezone

from campaigns import events
from campaigns.models import Campaign, CampaignStatus, CommitRefused, PlanBaseline, PlanFrozen
from campaigns.services.campaigns import lock_campaign, real_user
from campaigns.signals import plan_commit_requested, plan_committed

Row = TypeVar("Row", bound=models.Model)


@transaction.atomic
def commit_plan(
    *, campaign: Campaign, acting_user: User | None = None, over_team_budget: bool = False
) -> PlanBaseline:
    """Freeze the plan: snapshot it into the baseline and mark the campaign committed.

    Receivers of `plan_commit_requested` may refuse it (the ledger, when it would take the
    team over an allowance and `over_team_budget` does not acknowledge it); receivers of
    `plan_committed` (the ledger posts the reserved lots) run in this transaction.
    """
    locked = lock_campaign(campaign)
    if locked.status != CampaignStatus.DRAFT:
        raise PlanFrozen(f"campaign is already {locked.status}; the plan is frozen")
    problems = locked.commit_problems()
    if problems:
        raise CommitRefused(problems)
    who = real_user(acting_user)
    plan_commit_requested.send(
        sender=Campaign, campaign=locked, user=who, acknowledged=over_team_budget
    )
    baseline = PlanBaseline.objects.create(campaign=locked, snapshot=locked.snapshot())
    events.emit(events.PLAN_CHANGED, campaign_id=locked.pk)
    now = timezone.now()
    Campaign.objects.filter(pk=locked.pk).update(
        status=CampaignStatus.COMMITTED, committed_at=now, committed_by=who, updated_at=now
    )
    locked.refresh_from_db()
    plan_committed.send(sender=Campaign, campaign=locked, baseline=baseline, user=who)
    campaign.refresh_from_db()
    return baseline


def check_draft(campaign: Campaign, what: str) -> None:
    """Stop rules, stages and lots are written while drafting and frozen with the plan."""
    campaign.refuse_if_closed()
    if not campaign.is_draft:
        raise PlanFrozen(f"{what} are frozen once the plan is committed")


def add_draft_row(campaign: Campaign, what: str, row: Row) -> Row:
    """Save a new row of the draft plan (the caller's transaction)."""
    check_draft(lock_campaign(campaign), what)
    row.full_clean()
    row.save()
    return row


def change_draft_row(row: Row, what: str, changes: dict[str, Any]) -> Row:
    """Change a row of the draft plan (the caller's transaction)."""
    check_draft(lock_campaign(row.campaign), what)  # type: ignore[attr-defined]
    for field, value in changes.items():
        setattr(row, field, value)
    row.full_clean()
    row.save()
    return row


def remove_draft_row(row: models.Model, what: str) -> None:
    """Delete a row of the draft plan (the caller's transaction)."""
    check_draft(lock_campaign(row.campaign), what)  # type: ignore[attr-defined]
    row.delete()
