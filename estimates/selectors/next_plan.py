"""Reading the lessons a campaign leaves to the next plan (estimates/domain/next_plan.py,
docs/domain.md §21): its timeline's observations (the same rule as the calibration's), the
(kind, GPU) of every stage and item the next plan copies, and the team's calibration, the
campaign's own observations included. The closing report's "next time" advice and the clone
both call `campaign_lessons`. Writes nothing."""

from __future__ import annotations

from typing import Any

from campaigns.domain.timeline import CUT, Timeline
from campaigns.models import Campaign, ItemStatus
from estimates.domain import calibration, next_plan
from estimates.selectors.calibration import known_gpus, team_calibrations
from estimates.selectors.timeline import campaign_forecast


def plan_keys(timeline: Timeline, items: dict[int, str], known: list[str]) -> list[tuple[str, str]]:
    """(kind, GPU) of each stage the next plan copies (not a cut item's) and of each item's
    planned hours (next_plan.item_key); `items`: the live items' GPUs by id."""
    keys = []
    of_item: dict[int, list[tuple[str, bool, str]]] = {i: [] for i in items}
    for line in timeline.stages:
        if line.state == CUT:
            continue
        item_gpu = items.get(line.variant_id, "") if line.variant_id is not None else ""
        gpu = calibration.stage_gpu(item_gpu, line.resource, known)
        keys.append((line.kind, gpu))
        if line.variant_id in of_item:
            of_item[line.variant_id].append((line.kind, line.machine, gpu))
    for item_id, gpu in items.items():
        keys.append(next_plan.item_key(of_item[item_id], calibration.gpu_in(gpu, known)))
    return keys


def campaign_lessons(campaign: Campaign, timeline: Timeline | None = None) -> next_plan.Lessons:
    """What the next plan applies per stage kind and GPU (the rule of next_plan.lessons);
    `timeline` when the caller has the campaign's forecast already."""
    if timeline is None:
        timeline = campaign_forecast(campaign).timeline
    known = known_gpus()
    items = dict(
        campaign.items.exclude(status=ItemStatus.CUT).order_by("id").values_list("id", "gpu")
    )
    own = calibration.observations_of(
        timeline,
        campaign_id=campaign.pk,
        title=campaign.title,
        item_gpus=items,
        known_gpus=known,
    )
    return next_plan.lessons(
        plan_keys(timeline, items, known), own, team_calibrations(campaign.team_id)
    )


def clone_provenance(campaign: Campaign) -> list[dict[str, Any]]:
    """Where each planned figure of a campaign planned from another came from (docs/domain.md
    §21): the lesson the clone applied, as it recorded it on the item or stage, items first.
    Two queries."""
    rows: list[dict[str, Any]] = []
    for what, query in (
        ("item", campaign.items.order_by("id")),
        ("stage", campaign.stages.order_by("id")),
    ):
        for pk, name, lesson in query.filter(calibrated_from__isnull=False).values_list(
            "id", "name", "calibrated_from"
        ):
            if isinstance(lesson, dict):
                rows.append({"subject": what, "id": pk, "name": name, **lesson})
    return rows
