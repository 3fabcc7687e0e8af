"""What makes a forecast stale: plan changes and pilot measurements (docs/domain.md §10: "once a
pilot is logged, its measurement replaces the assumed utilization ... and the forecast is
recomputed"). The campaigns services name the change (campaigns/events.py); these handlers,
subscribed in `EstimatesConfig.ready()`, mark the campaign's forecast stale
(`estimates.services.mark_stale`), which enqueues its recompute once the transaction commits.
A removal never creates an estimate row: the campaign may have none yet.
"""

from __future__ import annotations

from campaigns import events
from campaigns.models import RunKind
from estimates.services import mark_stale


def plan_changed(*, campaign_id: int) -> None:
    mark_stale(campaign_id)


def plan_row_removed(*, campaign_id: int) -> None:
    mark_stale(campaign_id, create=False)


def throughput_recorded(*, run_id: int, campaign_id: int, kind: str) -> None:
    """A pilot measurement replaces the assumed figure: recompute. Full runs' samples do not."""
    if kind == RunKind.PILOT:
        mark_stale(campaign_id)


def subscribe() -> None:
    events.subscribe(events.PLAN_CHANGED, plan_changed)
    events.subscribe(events.RUN_CHANGED, plan_changed)
    events.subscribe(events.PLAN_ROW_REMOVED, plan_row_removed)
    events.subscribe(events.THROUGHPUT_RECORDED, throughput_recorded)
