"""The ledger's receivers of the campaigns' domain events, connected in LedgerConfig.ready().

The campaigns app knows nothing of the ledger (docs/domain.md §17); it
sends `plan_committed`, and here the reserved lots become rental entries, in the commit's own
transaction: a commit that rolls back posts nothing, and a commit posts each lot once.
"""

from __future__ import annotations

from typing import Any

from campaigns.models import Campaign
from campaigns.signals import plan_committed

from . import services


def post_lots_when_committed(sender: Any, *, campaign: Campaign, user: Any, **kwargs: Any) -> None:
    services.post_reserved_lots(campaign=campaign, user=user)


def connect() -> None:
    plan_committed.connect(post_lots_when_committed, dispatch_uid="ledger.post_reserved_lots")
