"""The ledger's receivers of the campaigns' domain events, connected in LedgerConfig.ready().

The campaigns app knows nothing of the ledger (docs/domain.md §17); it
sends `plan_committed`, and here the reserved lots become rental entries, in the commit's own
transaction: a commit that rolls back posts nothing, and a commit posts each lot once. It sends
`run_finished`, and a finished hourly run's cost is posted (once; a correction of its hours,
`run_hours_corrected`, posts the difference); it asks `spend_requested`
before applying a budget rule, and the ledger answers what the campaign has spent
(docs/domain.md §18). A stored alert is delivered by a worker once its scan has committed
(`alert_raised`, docs/domain.md §19). It sends `plan_commit_requested` before a commit, and the
ledger refuses one that would take the team's forecast over an allowance unless it is
acknowledged (§22).
"""

from __future__ import annotations

import logging
from decimal import Decimal
from typing import Any

from django.utils import timezone

from campaigns.models import Campaign, CommitOverTeamBudget, Run, RunHoursCorrection, Team
from campaigns.signals import (
    plan_commit_requested,
    plan_committed,
    run_finished,
    run_hours_corrected,
    spend_requested,
)
from ledger import services, tasks
from ledger.domain import team_budget as tb
from ledger.selectors import spend
from ledger.selectors import team_budget as budgets
from ledger.services import run_corrections
from ledger.services.alerts import alert_raised

logger = logging.getLogger(__name__)


def post_lots_when_committed(sender: Any, *, campaign: Campaign, user: Any, **kwargs: Any) -> None:
    services.post_reserved_lots(campaign=campaign, user=user)


def post_cost_when_finished(sender: Any, *, run: Run, **kwargs: Any) -> None:
    services.post_run_cost(run=run)


def adjust_cost_when_corrected(
    sender: Any, *, run: Run, correction: RunHoursCorrection, **kwargs: Any
) -> None:
    run_corrections.post_run_correction(correction=correction, acting_user=correction.made_by)


def answer_spend(sender: Any, *, campaign_id: int, now: Any = None, **kwargs: Any) -> Decimal:
    return spend.load_campaign_spend(Campaign.objects.get(pk=campaign_id), now)


def deliver_when_raised(sender: Any, *, alert_id: int, **kwargs: Any) -> None:
    # A broker outage must not fail the caller: the outbox rows, committed with the alert, are
    # sent by the retry scan instead (docs/domain.md §19.5).
    try:
        tasks.deliver_alert.delay(alert_id)
    except Exception:
        logger.warning("alert %s stored; its delivery waits for the retry scan", alert_id)


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


def post_to_chat_channels(sender: Any, *, instance: Any, created: bool, **kwargs: Any) -> None:
    """A new alert goes to each of the team's Slack/Teams channels too, once the transaction
    that stored it has committed (docs/domain.md §19.4)."""
    if not created:
        return
    from django.db import transaction

    from ledger import tasks
    from ledger.models import AlertChannel

    team_id = Campaign.objects.filter(pk=instance.campaign_id).values_list("team_id", flat=True)

    def later(channel_id: int) -> Any:
        return lambda: tasks.deliver_alert_to_channel.delay(instance.pk, channel_id)

    for channel_id in AlertChannel.objects.filter(team_id__in=team_id).values_list("pk", flat=True):
        transaction.on_commit(later(channel_id))


def connect() -> None:
    from django.db.models.signals import post_save

    from ledger.models import Alert

    post_save.connect(post_to_chat_channels, sender=Alert, dispatch_uid="ledger.chat_channels")
    plan_commit_requested.connect(
        refuse_over_team_budget, dispatch_uid="ledger.refuse_over_team_budget"
    )
    plan_committed.connect(post_lots_when_committed, dispatch_uid="ledger.post_reserved_lots")
    run_finished.connect(post_cost_when_finished, dispatch_uid="ledger.post_run_cost")
    run_hours_corrected.connect(
        adjust_cost_when_corrected, dispatch_uid="ledger.post_run_correction"
    )
    spend_requested.connect(answer_spend, dispatch_uid="ledger.campaign_spend")
    alert_raised.connect(deliver_when_raised, dispatch_uid="ledger.deliver_alert")
