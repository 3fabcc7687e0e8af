"""The write path of the estimates: marking a campaign's forecast stale and enqueueing its
recompute once the transaction commits (docs/domain.md §10: a pilot's measurement replaces the
assumed throughput and the forecast is recomputed).

The task (estimates.tasks) calls `estimates.forecasts` (`estimates.services.forecast`) to compute
and land the forecast; this module enqueues it.
"""

from __future__ import annotations

from celery import current_app
from django.db import transaction

from campaigns.models import Campaign
from estimates.services.clone import NOT_COPIED, clone_campaign, copied_fields
from estimates.services.forecast import bump


@transaction.atomic
def mark_stale(campaign: Campaign | int, *, create: bool = True) -> int | None:
    """The plan or a measurement changed: bump the input version, mark stale, enqueue the
    recompute once the transaction commits. Returns the new version (None: nothing to mark).

    Takes the campaign or its id. `create=False` is for deletions: a campaign being deleted
    must not get a new row.
    """
    campaign_id = campaign.pk if isinstance(campaign, Campaign) else int(campaign)
    version = bump(campaign_id, create=create)
    if version is not None:
        # One message per change: the earlier versions of one transaction are superseded in
        # the worker before anything is computed (estimates/services/forecast.py `recompute`).
        # By name: the task calls the services, so the services do not import it (no loop).
        current_app.tasks["estimates.tasks.recompute_forecast"].delay_on_commit(
            campaign_id, version
        )
    return version


__all__ = ["NOT_COPIED", "clone_campaign", "copied_fields", "mark_stale"]
