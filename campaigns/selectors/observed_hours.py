"""Reading a campaign's observed hours as campaigns/domain/observed_hours.py reconciles them:
its stages' typed figures and its ended runs (docs/domain.md §8.6). Two queries per call,
whatever the number of campaigns. Writes nothing."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from campaigns.domain.observed_hours import Reconciled, RunRow, StageRow, reconcile
from campaigns.models import Campaign, Run, Stage


def reconciled_for(campaign_ids: Iterable[int]) -> dict[int, Reconciled]:
    ids = list(campaign_ids)
    stages: dict[int, list[StageRow]] = defaultdict(list)
    runs: dict[int, list[RunRow]] = defaultdict(list)
    for pk, campaign_id, variant_id, kind, typed, reason in Stage.objects.filter(
        campaign_id__in=ids
    ).values_list("id", "campaign_id", "variant_id", "kind", "observed_hours", "observed_reason"):
        stages[campaign_id].append(StageRow(pk, variant_id, kind, typed, reason or ""))
    for campaign_id, variant_id, kind, status, hours, prior in (
        Run.objects.filter(campaign_id__in=ids)
        .order_by("id")
        .values_list("campaign_id", "variant_id", "kind", "status", "observed_hours", "prior_hours")
    ):
        runs[campaign_id].append(RunRow(variant_id, kind, status, hours, prior))
    return {pk: reconcile(stages[pk], runs[pk]) for pk in ids}


def reconciled(campaign: Campaign) -> Reconciled:
    """The campaign's stages' observed figures and its unattributed runs."""
    return reconciled_for([campaign.pk])[campaign.pk]
