"""The ledger's receivers of the campaigns' domain events, connected in LedgerConfig.ready().

The campaigns app knows nothing of the ledger (docs/domain.md §17); it
sends `plan_committed`, and here the reserved lots become rental entries, in the commit's own
transaction: a commit that rolls back posts nothing, and a commit posts each lot once. It sends
`run_finished`, and a finished hourly run's cost is posted (once); it asks `spend_requested`
before applying a budget rule, and the ledger answers what the campaign has spent
(docs/domain.md §18). A stored alert is delivered by a worker once its scan has committed
(`alert_raised`, docs/domain.md §19).
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from campaigns.models import Campaign, Run
from campaigns.signals import plan_committed, run_finished, spend_requested
from ledger import services, tasks
from ledger.selectors import spend
from ledger.services.alerts import alert_raised


def post_lots_when_committed(sender: Any, *, campaign: Campaign, user: Any, **kwargs: Any) -> None:
    services.post_reserved_lots(campaign=campaign, user=user)


def post_cost_when_finished(sender: Any, *, run: Run, **kwargs: Any) -> None:
    services.post_run_cost(run=run)


def answer_spend(sender: Any, *, campaign_id: int, now: Any = None, **kwargs: Any) -> Decimal:
    return spend.load_campaign_spend(Campaign.objects.get(pk=campaign_id), now)


def deliver_when_raised(sender: Any, *, alert_id: int, **kwargs: Any) -> None:
    tasks.deliver_alert.delay(alert_id)


def connect() -> None:
    plan_committed.connect(post_lots_when_committed, dispatch_uid="ledger.post_reserved_lots")
    run_finished.connect(post_cost_when_finished, dispatch_uid="ledger.post_run_cost")
    spend_requested.connect(answer_spend, dispatch_uid="ledger.campaign_spend")
    alert_raised.connect(deliver_when_raised, dispatch_uid="ledger.deliver_alert")
