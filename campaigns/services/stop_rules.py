"""Stop rules of a draft plan (docs/domain.md §4): written before the runs, frozen at commit.
What a rule does to a running run is campaigns/services/stop_checks.py's."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import User
from django.db import transaction

from campaigns.models import Campaign, StopRule
from campaigns.services.plans import add_draft_row, change_draft_row, remove_draft_row


@transaction.atomic
def add_stop_rule(
    *, campaign: Campaign, acting_user: User | None = None, **fields: Any
) -> StopRule:
    """A stop rule, written before the runs (docs/domain.md §4); refused after commit."""
    return add_draft_row(campaign, "stop rules", StopRule(campaign=campaign, **fields))


@transaction.atomic
def change_stop_rule(
    *, rule: StopRule, acting_user: User | None = None, **changes: Any
) -> StopRule:
    return change_draft_row(rule, "stop rules", changes)


@transaction.atomic
def remove_stop_rule(*, rule: StopRule, acting_user: User | None = None) -> None:
    remove_draft_row(rule, "stop rules")
