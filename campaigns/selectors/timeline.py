"""Reading what a campaign's timeline is built from (campaigns/domain/timeline.py,
docs/domain.md §7.7): its stages and items as planned, the baseline's as committed, its runs
(ended ones with their hours, running ones with the hours they have run so far) and its lots.
Six queries per campaign, whatever the size of the plan. Writes nothing.

Every hour figure of a campaign's calendar comes from the one timeline. The item forecasts it
scales by are the estimates' (`estimates.selectors.timeline.campaign_timeline`, the function
every surface calls); this app reads only what needs no forecast: the plan figures and the
observed hours (`plan_figures_of`).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from decimal import Decimal
from typing import Any

from django.utils import timezone

from campaigns.domain.observed_hours import RunRow
from campaigns.domain.run_hours import measured_hours
from campaigns.domain.plan_figures import PlanFigures
from campaigns.domain.timeline import (
    ItemPlan,
    LotPlan,
    StagePlan,
    TimelineInputs,
    build,
)
from campaigns.models import Campaign, CampaignStatus, PlanBaseline, PlannedItem, Run, RunStatus

HOUR = 3600


def _stage(row: Any) -> StagePlan:
    return StagePlan(
        id=row.pk,
        name=row.name,
        kind=row.kind,
        machine=row.machine,
        resource=row.resource or "",
        planned_hours=Decimal(row.planned_hours),
        variant_id=row.variant_id,
        depends_on=tuple(sorted(d.pk for d in row.depends_on.all())),
        typed_hours=row.observed_hours,
        typed_reason=row.observed_reason or "",
    )


def frozen_stage(row: Mapping[str, Any]) -> StagePlan:
    """A stage as the baseline's snapshot froze it."""
    return StagePlan(
        id=int(row["id"]),
        name=str(row["name"]),
        kind=str(row.get("kind", "")),
        machine=bool(row.get("machine", True)),
        resource=str(row.get("resource") or ""),
        planned_hours=Decimal(str(row["planned_hours"])),
        variant_id=row.get("variant"),
        depends_on=tuple(int(d) for d in row.get("depends_on", [])),
    )


def frozen_item(row: Mapping[str, Any]) -> ItemPlan:
    hours = Decimal(str(row["planned_hours"]))
    return ItemPlan(
        id=int(row["id"]),
        name=str(row.get("name", "")),
        tier=str(row.get("tier", "mandatory")),
        status=str(row.get("status") or "planned"),
        planned_hours=hours,
        prep_hours=Decimal(str(row.get("prep_hours") or 0)),
        reserved_hours=hours,
    )


def item_plan(item: PlannedItem, reserved: Mapping[int, Decimal] | None) -> ItemPlan:
    cfg = item.config if isinstance(item.config, dict) else {}
    gpus = item.gpus if item.gpus is not None else cfg.get("gpus")
    return ItemPlan(
        id=item.pk,
        name=item.name,
        tier=item.tier,
        status=item.status,
        planned_hours=Decimal(item.planned_hours),
        prep_hours=Decimal(item.prep_hours),
        gpus=gpus if isinstance(gpus, int) and not isinstance(gpus, bool) else None,
        gpu=item.gpu,
        reserved_hours=item.planned_hours if reserved is None else reserved.get(item.pk),
    )


def run_row(row: Mapping[str, Any], now: datetime) -> RunRow:
    """A run as the timeline reads it; a running one with the hours it has run so far."""
    running = Decimal(0)
    if row["status"] == RunStatus.RUNNING:
        # Measured by the run's own clock (campaigns/domain/run_hours.py), up to now.
        running = measured_hours(
            started=row["segment_started_at"] or row["started_at"],
            ended=now,
            prior_hours=row["prior_hours"] or Decimal(0),
        )
    return RunRow(
        row["variant_id"],
        row["kind"],
        row["status"],
        row["observed_hours"],
        row["prior_hours"] or Decimal(0),
        running,
    )


def _lots(campaign: Campaign) -> tuple[LotPlan, ...]:
    lots = []
    for lot in campaign.lots.select_related("plan__gpu").order_by("id"):
        start = None
        if lot.start is not None and campaign.committed_at is not None:
            start = (lot.start - campaign.committed_at).total_seconds() / HOUR
        lots.append(
            LotPlan(
                label=f"{lot.plan} ×{lot.quantity}",
                gpu=lot.plan.gpu.name,
                hours=float(lot.plan.duration_hours),
                quantity=lot.quantity,
                start_hours=start,
            )
        )
    return tuple(lots)


def _baseline(campaign: Campaign) -> dict[str, Any] | None:
    if campaign.status == CampaignStatus.DRAFT:
        return None
    row = PlanBaseline.objects.filter(campaign=campaign).only("snapshot").first()
    return row.snapshot if row is not None and isinstance(row.snapshot, dict) else None


def timeline_inputs(campaign: Campaign, *, now: datetime | None = None) -> TimelineInputs:
    """The campaign's plan, baseline, runs and lots as the timeline reads them."""
    now = now or timezone.now()
    snapshot = _baseline(campaign)
    committed_items = None
    committed_stages = None
    reserved = None
    if snapshot is not None:
        committed_items = tuple(frozen_item(r) for r in snapshot.get("items") or [])
        committed_stages = tuple(frozen_stage(r) for r in snapshot.get("stages") or [])
        reserved = {i.id: i.planned_hours for i in committed_items}
    runs = Run.objects.filter(campaign=campaign).order_by("id")
    fields = ("variant_id", "kind", "status", "observed_hours", "prior_hours")
    return TimelineInputs(
        window_hours=Decimal(campaign.window_hours),
        stages=tuple(
            _stage(s) for s in campaign.stages.prefetch_related("depends_on").order_by("id")
        ),
        items=tuple(item_plan(i, reserved) for i in campaign.items.order_by("id")),
        runs=tuple(
            run_row(r, now) for r in runs.values(*fields, "segment_started_at", "created_at")
        ),
        lots=_lots(campaign),
        committed_stages=committed_stages,
        committed_items=committed_items,
        closed=campaign.status == CampaignStatus.CLOSED,
    )


def plan_figures_of(campaign: Campaign) -> PlanFigures:
    """The plan's named figures and its observed hours (docs/domain.md §8.5): the timeline's,
    which no forecast changes."""
    return build(timeline_inputs(campaign)).figures
