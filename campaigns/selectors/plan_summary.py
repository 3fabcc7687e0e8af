"""What the campaign page and the forecast say about a plan: tiers, reserved hours against the
window, same-GPU overflow alerts, grid warnings. Reads the models, computes with the pure
modules (`calendar`, `design`)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from campaigns.domain import calendar
from campaigns.domain.formatting import format_hours
from campaigns.domain.grid_warning import grid_warning
from campaigns.domain.observed_hours import Reconciled
from campaigns.domain.plan_figures import ItemWork, PlanFigures, plan_figures
from campaigns.models import Campaign, ItemRole, ItemStatus, Stage, Tier
from campaigns.selectors.observed_hours import reconciled

fmt_hours = format_hours  # the campaign page's name for the project's one hours formatter


@dataclass(frozen=True)
class CampaignSummary:
    tiers: dict[str, int]
    reserved_hours: Decimal
    window_hours: Decimal
    uncommitted_hours: Decimal
    headline: str
    alerts: list[str] = field(default_factory=list)
    schedule: calendar.Schedule | None = None
    figures: PlanFigures | None = None


def stage_keys(stages: list[Stage]) -> dict[int, str]:
    """Stage names as calendar keys (people read them in alerts); #id only where names repeat."""
    names = Counter(s.name for s in stages)
    return {s.pk: s.name if names[s.name] == 1 else f"{s.name} #{s.pk}" for s in stages}


def calendar_stages(campaign: Campaign) -> list[calendar.Stage]:
    stages = list(campaign.stages.prefetch_related("depends_on").order_by("id"))
    keys = stage_keys(stages)
    return [
        calendar.Stage(
            key=keys[s.pk],
            name=s.name,
            kind=s.kind,
            machine=s.machine,
            resource=s.resource or None,
            planned_hours=float(s.planned_hours),
            depends_on=tuple(keys[d.pk] for d in s.depends_on.all()),
        )
        for s in stages
    ]


def campaign_summary(
    campaign: Campaign, *, seen: Reconciled | None = None, lots: list[Any] | None = None
) -> CampaignSummary:
    """The plan's totals, schedule and alerts. ``seen`` (its observed hours) and ``lots`` (its
    lot reservations with their plans) when the caller has read them already."""
    items = list(campaign.items.all())
    tiers = Counter(i.tier for i in items if i.status != ItemStatus.CUT)
    window = Decimal(campaign.window_hours)
    alerts: list[str] = []
    schedule = None
    stages = calendar_stages(campaign)
    if stages:
        try:
            schedule = calendar.schedule(stages, float(window))
        except ValueError as exc:
            alerts.append(f"The calendar cannot be scheduled: {exc}")
    if schedule is not None:
        alerts.extend(
            load.message
            for load in calendar.resource_loads(stages, float(window))
            if load.exceeds_window
        )
    figures = figures_of(campaign, items, schedule, seen=seen, lots=lots)
    reserved = figures.calendar_hours
    uncommitted = figures.spare_hours
    if uncommitted >= 0:
        headline = (
            f"The calendar takes {fmt_hours(reserved)} h of a {fmt_hours(window)} h window: "
            f"{fmt_hours(uncommitted)} h to spare"
        )
    else:
        headline = (
            f"The calendar takes {fmt_hours(reserved)} h of a {fmt_hours(window)} h window: "
            f"{fmt_hours(-uncommitted)} h over"
        )
        alerts.append(
            f"The calendar exceeds the window by {fmt_hours(-uncommitted)} h: look at a longer "
            "plan, or a reduced protocol that still answers the question."
        )
    if not any(i.tier == Tier.MANDATORY for i in items):
        alerts.append("No mandatory item yet: the plan cannot be committed.")
    if not any(i.role == ItemRole.BASELINE for i in items):
        alerts.append("No baseline: a variant is only judged against a baseline.")
    warning = grid_warning([i.config for i in items if i.role == ItemRole.VARIANT and i.config])
    if warning:
        alerts.append(warning)
    return CampaignSummary(
        tiers={t: tiers.get(t, 0) for t in Tier.values},
        reserved_hours=reserved,
        window_hours=window,
        uncommitted_hours=uncommitted,
        headline=headline,
        alerts=alerts,
        schedule=schedule,
        figures=figures,
    )


def figures_of(
    campaign: Campaign,
    items: list[Any],
    schedule: calendar.Schedule | None,
    *,
    seen: Reconciled | None = None,
    lots: list[Any] | None = None,
) -> PlanFigures:
    """The plan's four hour figures (docs/domain.md §8.5), from its rows and its schedule."""
    if lots is None:
        lots = list(campaign.lots.select_related("plan"))
    if seen is None:
        seen = reconciled(campaign)
    return plan_figures(
        [
            ItemWork(i.planned_hours, i.prep_hours, i.gpus, i.status == ItemStatus.CUT)
            for i in items
        ],
        calendar_hours=None if schedule is None else schedule.makespan_hours,
        lots=[(lot.plan.duration_hours, lot.quantity) for lot in lots],
        window_hours=Decimal(campaign.window_hours),
        observed_hours=seen.total if seen.any_observed else None,
    )


def campaign_figures(campaign: Campaign) -> PlanFigures:
    """The figures alone (the API's and the report's), computed as the page computes them."""
    figures = campaign_summary(campaign).figures
    assert figures is not None
    return figures


def commit_warnings(campaign: Campaign) -> list[str]:
    """What the commit confirmation page warns about before the plan freezes (none refuses the
    commit; `Campaign.commit_problems` does): items with no stage, the page's alerts (stages
    outgrowing the window, grid-like variants, no baseline), lots not covering the calendar."""
    warnings: list[str] = []
    staged = set(campaign.stages.exclude(variant=None).values_list("variant_id", flat=True))
    for item in campaign.items.exclude(status=ItemStatus.CUT).order_by("id"):
        if item.pk not in staged:
            warnings.append(f"{item.name} has no stage: the calendar does not reserve its hours.")
    live = list(campaign.items.exclude(status=ItemStatus.CUT))
    if live and not any(i.tokens or i.samples for i in live):
        # A pilot measures throughput; only an item's stated work turns it into hours (§10).
        warnings.append(
            "No item states its work (tokens or samples): a pilot's throughput cannot rescale "
            "any estimate, and the forecast stays at the planned hours. Fill an item's work in "
            "its row."
        )
    summary = campaign_summary(campaign)
    warnings.extend(summary.alerts)
    lots = list(campaign.lots.select_related("plan"))
    if summary.schedule is not None and summary.schedule.machine_hours:
        machine_span = max(
            (e.end_hours for e in summary.schedule.entries if e.machine), default=0.0
        )
        covered = sum(float(lot.plan.duration_hours) * lot.quantity for lot in lots)
        if not lots:
            warnings.append(
                f"No lot is reserved: the calendar needs {format_hours(machine_span)} h of "
                "machine time."
            )
        elif covered < machine_span:
            warnings.append(
                f"The reserved lots cover {format_hours(covered)} h; the calendar needs "
                f"{format_hours(machine_span)} h of machine time."
            )
    return warnings


@dataclass(frozen=True)
class StageFacts:
    """What the Gantt marks beside the schedule, by calendar key: the stages of cut items and
    each stage's observed hours, reconciled with its runs (docs/domain.md §8.6)."""

    cut: frozenset[str]
    observed: dict[str, float]


def stage_facts(campaign: Campaign, *, seen: Reconciled | None = None) -> StageFacts:
    stages = list(campaign.stages.select_related("variant").order_by("id"))
    keys = stage_keys(stages)
    if seen is None:
        seen = reconciled(campaign)
    return StageFacts(
        cut=frozenset(
            keys[s.pk]
            for s in stages
            if s.variant is not None and s.variant.status == ItemStatus.CUT
        ),
        observed={
            keys[s.pk]: float(hours) for s in stages if (hours := seen.hours(s.pk)) is not None
        },
    )
