"""Reading the facts behind each item's fate (campaigns/domain/item_fate.py, docs/domain.md
§5.5): its full runs by status and its stages as the campaign's timeline states them
(campaigns/domain/timeline.py; a stage's state needs no forecast, so this app builds it).
Accepted deliverables are a ledger fact this app cannot read: the API's fates are given without
them (`deliverables=None`), the closing report passes them. Seven queries per campaign, however
many items. Writes nothing."""

from __future__ import annotations

from django.db.models import Count

from campaigns.domain import item_fate as fates
from campaigns.domain.timeline import build
from campaigns.models import Campaign, ItemStatus, Run, RunKind
from campaigns.selectors.timeline import timeline_inputs


def full_run_counts(campaign: Campaign) -> dict[int, dict[str, int]]:
    """Each item's full runs by status, in one aggregate."""
    counts: dict[int, dict[str, int]] = {}
    rows = (
        Run.objects.filter(campaign=campaign, kind=RunKind.FULL, variant__isnull=False)
        .order_by()
        .values_list("variant_id", "status")
        .annotate(n=Count("id"))
    )
    for item_id, status, n in rows:
        counts.setdefault(item_id, {})[status] = n
    return counts


def item_fates(campaign: Campaign) -> dict[int, fates.ItemFate]:
    """Every item's fate by item id, from its full runs and its stages on the timeline."""
    inputs = timeline_inputs(campaign)
    return fates.fates_of(
        ((item.id, item.status == ItemStatus.CUT) for item in inputs.items),
        full_run_counts(campaign),
        fates.stage_facts(build(inputs).stages),
    )
