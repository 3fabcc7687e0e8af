"""Reading what a campaign's timeline is built from (campaigns/domain/timeline.py,
docs/domain.md §7.7): its stages and items as planned, the baseline's as committed, its runs
(ended ones with their hours, running ones with the hours they have run so far) and its lots.
Six queries per campaign, whatever the size of the plan (`timeline_inputs_of`: seven for any
number of campaigns). Writes nothing.

Every hour figure of a campaign's calendar comes from the one timeline. The item forecasts it
scales by are the estimates' (`estimates.selectors.timeline.campaign_timeline`, the function
every surface calls); this app reads only what needs no forecast: the plan figures and the
observed hours (`plan_figures_of`).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any

from django.db.models import DecimalField, Prefetch, QuerySet, Sum, Value
from django.db.models.functions import Coalesce, NullIf
from django.utils import timezone

from campaigns.domain.observed_hours import RunRow
from campaigns.domain.plan_figures import PlanFigures
from campaigns.domain.run_hours import measured_hours
from campaigns.domain.timeline import (
    ItemPlan,
    LotPlan,
    StagePlan,
    TimelineInputs,
    build,
)
from campaigns.models import (
    Campaign,
    CampaignStatus,
    LotReservation,
    PlanBaseline,
    PlannedItem,
    Run,
    RunStatus,
    Stage,
)

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


def _lots(campaign: Campaign, rows: Iterable[Any] | None = None) -> tuple[LotPlan, ...]:
    """The campaign's lots as the timeline lays them out; `rows` when already read."""
    if rows is None:
        rows = campaign.lots.select_related("plan__gpu").order_by("id")
    lots = []
    for lot in rows:
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


_RUN_FIELDS = (
    "variant_id",
    "kind",
    "status",
    "observed_hours",
    "prior_hours",
    "segment_started_at",
    "started_at",
)


@dataclass(frozen=True)
class _Rows:
    """One campaign's rows as read: its baseline's snapshot, stages, items, runs and lots."""

    snapshot: dict[str, Any] | None
    stages: Iterable[Any]
    items: Iterable[PlannedItem]
    runs: Iterable[RunRow]
    lots: tuple[LotPlan, ...]


def _assemble(campaign: Campaign, rows: _Rows, now: datetime) -> TimelineInputs:
    committed_items = None
    committed_stages = None
    reserved = None
    if rows.snapshot is not None:
        committed_items = tuple(frozen_item(r) for r in rows.snapshot.get("items") or [])
        committed_stages = tuple(frozen_stage(r) for r in rows.snapshot.get("stages") or [])
        reserved = {i.id: i.planned_hours for i in committed_items}
    return TimelineInputs(
        window_hours=Decimal(campaign.window_hours),
        stages=tuple(_stage(s) for s in rows.stages),
        items=tuple(item_plan(i, reserved) for i in rows.items),
        runs=tuple(rows.runs),
        lots=rows.lots,
        committed_stages=committed_stages,
        committed_items=committed_items,
        closed=campaign.status == CampaignStatus.CLOSED,
    )


def timeline_inputs(campaign: Campaign, *, now: datetime | None = None) -> TimelineInputs:
    """The campaign's plan, baseline, runs and lots as the timeline reads them."""
    now = now or timezone.now()
    runs = Run.objects.filter(campaign=campaign).order_by("id").values(*_RUN_FIELDS)
    rows = _Rows(
        snapshot=_baseline(campaign),
        stages=campaign.stages.prefetch_related("depends_on").order_by("id"),
        items=campaign.items.order_by("id"),
        runs=[run_row(r, now) for r in runs],
        lots=_lots(campaign),
    )
    return _assemble(campaign, rows, now)


_STAGE_COLUMNS = (
    "id",
    "campaign_id",
    "name",
    "kind",
    "machine",
    "resource",
    "planned_hours",
    "variant_id",
    "observed_hours",
    "observed_reason",
)
_ITEM_COLUMNS = (
    "id",
    "campaign_id",
    "name",
    "tier",
    "status",
    "planned_hours",
    "prep_hours",
    "gpus",
    "gpu",
    "config",
)


def _ended_runs_summed(runs: QuerySet[Run]) -> list[tuple[int, int, RunRow]]:
    """The ended runs of each item, kind and status as one row, their hours summed in SQL as
    `run_hours` counts each (its hours, else its earlier segments'; none: not counted)."""
    took = Coalesce(
        "observed_hours", NullIf("prior_hours", Value(Decimal(0), output_field=DecimalField()))
    )
    groups = (
        runs.exclude(status=RunStatus.RUNNING)
        .order_by()
        .values("campaign_id", "variant_id", "kind", "status")
        .annotate(hours=Sum(took))
        .order_by("campaign_id", "variant_id", "kind", "status")
    )
    return [
        (n, g["campaign_id"], RunRow(g["variant_id"], g["kind"], g["status"], g["hours"]))
        for n, g in enumerate(groups)
    ]


def _runs_of(ids: Sequence[int], now: datetime, summed: bool) -> dict[int, list[RunRow]]:
    """The campaigns' runs as the timeline reads them, by campaign, in id order (`summed`: the
    ended ones summed per item, kind and status first). Only a running run's moments are read
    (what it has run so far): most runs have ended (two queries)."""
    runs = Run.objects.filter(campaign_id__in=ids)
    found: list[tuple[int, int, RunRow]] = (
        _ended_runs_summed(runs)
        if summed
        else [
            (pk, campaign_id, RunRow(variant_id, kind, status, hours, prior or Decimal(0)))
            for pk, campaign_id, variant_id, kind, status, hours, prior in runs.exclude(
                status=RunStatus.RUNNING
            ).values_list("id", "campaign_id", *_RUN_FIELDS[:5])
        ]
    )
    found += [
        (r["id"], r["campaign_id"], run_row(r, now))
        for r in runs.filter(status=RunStatus.RUNNING).values("id", "campaign_id", *_RUN_FIELDS)
    ]
    out: dict[int, list[RunRow]] = defaultdict(list)
    if not summed:
        found.sort(key=lambda f: f[0])
    for _, campaign_id, row in found:
        out[campaign_id].append(row)
    return out


def _by_campaign(rows: Iterable[Any]) -> dict[int, list[Any]]:
    """Rows (model instances or `.values()` dicts) grouped by their campaign, order kept."""
    out: dict[int, list[Any]] = defaultdict(list)
    for row in rows:
        out[row["campaign_id"] if isinstance(row, dict) else row.campaign_id].append(row)
    return out


def timeline_inputs_of(
    campaigns: Sequence[Campaign],
    *,
    now: datetime | None = None,
    lots: bool = True,
    summed: bool = False,
) -> dict[int, TimelineInputs]:
    """`timeline_inputs` of many campaigns at once, by campaign id, in seven queries however
    many campaigns (the team's calibration reads every committed campaign's timeline). Without
    their `lots`, in six; `summed`: the ended runs of an item, kind and status as one row (the
    stages' observed figures and states are the same, their run counts are not), for a read
    of a whole team's stages that must not grow with its runs."""
    now = now or timezone.now()
    ids = [c.pk for c in campaigns]
    # Only the columns the timeline reads: a team's campaigns hold many rows.
    stages = _by_campaign(
        Stage.objects.filter(campaign_id__in=ids)
        .only(*_STAGE_COLUMNS)
        .prefetch_related(Prefetch("depends_on", queryset=Stage.objects.only("id")))
        .order_by("id")
    )
    items = _by_campaign(
        PlannedItem.objects.filter(campaign_id__in=ids).only(*_ITEM_COLUMNS).order_by("id")
    )
    runs = _runs_of(ids, now, summed)
    reserved = _by_campaign(
        LotReservation.objects.filter(campaign_id__in=ids)
        .select_related("plan__gpu")
        .order_by("id")
        if lots
        else ()
    )
    snapshots = {
        pk: snapshot
        for pk, snapshot in PlanBaseline.objects.filter(campaign_id__in=ids).values_list(
            "campaign_id", "snapshot"
        )
        if isinstance(snapshot, dict)
    }
    return {
        c.pk: _assemble(
            c,
            _Rows(
                snapshot=None if c.status == CampaignStatus.DRAFT else snapshots.get(c.pk),
                stages=stages[c.pk],
                items=items[c.pk],
                runs=runs[c.pk],
                lots=_lots(c, reserved[c.pk]),
            ),
            now,
        )
        for c in campaigns
    }


def plan_figures_of(campaign: Campaign) -> PlanFigures:
    """The plan's named figures and its observed hours (docs/domain.md §8.5): the timeline's,
    which no forecast changes."""
    return build(timeline_inputs(campaign)).figures
