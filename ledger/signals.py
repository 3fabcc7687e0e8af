"""The ledger's receivers of the campaigns' domain events, connected in LedgerConfig.ready().

The campaigns app knows nothing of the ledger (docs/domain.md §17); it
sends `plan_committed`, and here the reserved lots become rental entries, in the commit's own
transaction: a commit that rolls back posts nothing, and a commit posts each lot once. It sends
`run_finished`, and a finished hourly run's cost is posted (once; a correction of its hours,
`run_hours_corrected`, posts the difference); it asks `spend_requested`
before applying a budget rule, and the ledger answers what the campaign has spent
(docs/domain.md §18). It sends `run_stopped` and `run_finished`, and the team is told on its
alert channels (§19.7), and `team_created`, and the new team's owners get the default e-mail
channel (§19.3). It sends `plan_commit_requested` before a commit, and the ledger refuses one
that would take the team's forecast over an allowance unless it is acknowledged (§22).
"""

from __future__ import annotations

import logging
from decimal import Decimal
from typing import Any

from django.utils import timezone

from campaigns.models import Campaign, CommitOverTeamBudget, Run, RunHoursCorrection, Team
from campaigns.services.campaigns import real_user
from campaigns.signals import (
    plan_commit_requested,
    plan_committed,
    run_finished,
    run_hours_corrected,
    run_stopped,
    spend_requested,
    team_created,
)
from ledger import services
from ledger.domain import team_budget as tb
from ledger.operations import counters
from ledger.selectors import spend
from ledger.selectors import team_budget as budgets
from ledger.services import run_corrections
from ledger.services.alert_channels import add_owners_email
from ledger.services.alerts import raise_run_event

logger = logging.getLogger(__name__)


def post_lots_when_committed(sender: Any, *, campaign: Campaign, user: Any, **kwargs: Any) -> None:
    services.post_reserved_lots(campaign=campaign, acting_user=real_user(user))


def post_cost_when_finished(sender: Any, *, run: Run, **kwargs: Any) -> None:
    services.post_run_cost(run=run)


def tell_when_finished(sender: Any, *, run: Run, **kwargs: Any) -> None:
    raise_run_event(run=run, finished=True)


def tell_when_stopped(sender: Any, *, run: Run, **kwargs: Any) -> None:
    raise_run_event(run=run)
    kind = run.stop_rule.kind if run.stop_rule is not None else "manual"
    counters.add_after_commit([(("runs_stopped", kind), 1)])


def email_owners_of_new_team(sender: Any, *, team: Team, **kwargs: Any) -> None:
    add_owners_email(team=team)


def adjust_cost_when_corrected(
    sender: Any, *, run: Run, correction: RunHoursCorrection, **kwargs: Any
) -> None:
    run_corrections.post_run_correction(correction=correction, acting_user=correction.made_by)


def answer_spend(sender: Any, *, campaign_id: int, now: Any = None, **kwargs: Any) -> Decimal:
    return spend.load_campaign_spend(Campaign.objects.get(pk=campaign_id), now)


def refuse_over_team_budget(
    sender: Any, *, campaign: Campaign, acknowledged: bool = False, **kwargs: Any
) -> None:
    """Refuse a commit that takes a period's forecast over its allowance, naming the figures."""
    if acknowledged or not budgets.allowances(campaign.team_id):
        return
    # Commits of one team are serialised here: two racing commits never both pass the check.
    Team.objects.select_for_update().filter(pk=campaign.team_id).first()
    facts = budgets.team_facts(campaign.team_id)
    now = timezone.now()
    over = tb.exceeded_by(
        facts.allowances, facts.charges, facts.burns, budgets.commit_charges(campaign, now), now
    )
    if over:
        raise CommitOverTeamBudget(
            [tb.describe(after) for _before, after in over],
            [budgets.period_json(after) for _before, after in over],
        )


def connect() -> None:
    plan_commit_requested.connect(
        refuse_over_team_budget, dispatch_uid="ledger.refuse_over_team_budget"
    )
    plan_committed.connect(post_lots_when_committed, dispatch_uid="ledger.post_reserved_lots")
    run_finished.connect(post_cost_when_finished, dispatch_uid="ledger.post_run_cost")
    run_hours_corrected.connect(
        adjust_cost_when_corrected, dispatch_uid="ledger.post_run_correction"
    )
    spend_requested.connect(answer_spend, dispatch_uid="ledger.campaign_spend")
    run_finished.connect(tell_when_finished, dispatch_uid="ledger.run_finished_alert")
    run_stopped.connect(tell_when_stopped, dispatch_uid="ledger.run_stopped_alert")
    team_created.connect(email_owners_of_new_team, dispatch_uid="ledger.owners_email_channel")
