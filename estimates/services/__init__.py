"""The write path of the estimates: marking a campaign's forecast stale and enqueueing its
recompute once the transaction commits (docs/domain.md §10: a pilot's measurement replaces the
assumed throughput and the forecast is recomputed).

The task (estimates.tasks) calls `estimates.forecasts` (`estimates.services.forecast`) to compute
and land the forecast; this module enqueues it.
"""

from __future__ import annotations

from django.db import transaction

from campaigns.models import Campaign
from estimates import tasks
from estimates.services.clone import NOT_COPIED, clone_campaign, copied_fields
from estimates.services.forecast import bump as _bump
from estimates.services.forecast import campaign_row as _campaign_row


class _EnqueueRecompute:
    """The on-commit callback; one per campaign and transaction, whatever the number of saves."""

    def __init__(self, campaign_id: int) -> None:
        self.campaign_id = campaign_id
        # Django's robust on-commit logging names the callback by it (campaigns/enqueue.py):
        # without one, a broker outage raised AttributeError from the log line, after commit.
        self.__qualname__ = f"recompute forecast of campaign {campaign_id}"

    def __call__(self) -> None:
        # The version as committed (later saves in the same transaction bumped it again).
        version = _campaign_row(self.campaign_id).values_list("input_version", flat=True).first()
        if version is not None:
            tasks.recompute_forecast.delay(self.campaign_id, version)

    def __repr__(self) -> str:
        return f"<recompute forecast of campaign {self.campaign_id}>"


def _enqueue_on_commit(campaign_id: int) -> None:
    connection = transaction.get_connection()
    if connection.in_atomic_block:
        for _sids, func, _robust in connection.run_on_commit:
            if isinstance(func, _EnqueueRecompute) and func.campaign_id == campaign_id:
                return
    # robust: a broker outage must not turn a committed request into a 500; the sweep catches up.
    transaction.on_commit(_EnqueueRecompute(campaign_id), robust=True)


@transaction.atomic
def mark_stale(campaign: Campaign | int, *, create: bool = True) -> int | None:
    """The plan or a measurement changed: bump the input version, mark stale, enqueue the
    recompute once the transaction commits. Returns the new version (None: nothing to mark).

    Takes the campaign or its id. `create=False` is for deletions: a campaign being deleted
    must not get a new row.
    """
    campaign_id = campaign.pk if isinstance(campaign, Campaign) else int(campaign)
    version = _bump(campaign_id, create=create)
    if version is not None:
        _enqueue_on_commit(campaign_id)
    return version


__all__ = ["NOT_COPIED", "clone_campaign", "copied_fields", "mark_stale"]
