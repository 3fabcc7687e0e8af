"""Calendar stages of a draft plan (docs/domain.md §7): added, changed, linked by their
dependencies, removed; frozen at commit. What a stage really took is observed_hours.py's."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import transaction

from campaigns import events
from campaigns.models import Campaign, Stage
from campaigns.services.campaigns import lock_campaign
from campaigns.services.plans import check_draft


@transaction.atomic
def add_stage(
    *,
    campaign: Campaign,
    acting_user: User | None = None,
    depends_on: Sequence[Stage] = (),
    **fields: Any,
) -> Stage:
    """A calendar stage of the draft plan (observed hours come after commit, separately)."""
    locked = lock_campaign(campaign)
    check_draft(locked, "calendar stages")
    stage = Stage(campaign=locked, **fields)
    _check_stage_links(stage, depends_on)
    stage.full_clean()
    stage.save()
    stage.depends_on.set(depends_on)
    events.emit(events.PLAN_CHANGED, campaign_id=stage.campaign_id)
    return stage


@transaction.atomic
def change_stage(
    *,
    stage: Stage,
    acting_user: User | None = None,
    depends_on: Sequence[Stage] | None = None,
    **changes: Any,
) -> Stage:
    check_draft(lock_campaign(stage.campaign), "calendar stages")
    if "planned_hours" in changes and changes["planned_hours"] != stage.planned_hours:
        # Hours typed by hand are the planner's own figure, no longer a clone's lesson (§21).
        stage.calibrated_from = None
    for field, value in changes.items():
        setattr(stage, field, value)
    _check_stage_links(stage, depends_on or ())
    stage.full_clean()
    stage.save()
    if depends_on is not None:
        stage.depends_on.set(depends_on)
    events.emit(events.PLAN_CHANGED, campaign_id=stage.campaign_id)
    return stage


@transaction.atomic
def remove_stage(*, stage: Stage, acting_user: User | None = None) -> None:
    check_draft(lock_campaign(stage.campaign), "calendar stages")
    stage.delete()
    events.emit(events.PLAN_ROW_REMOVED, campaign_id=stage.campaign_id)


def _check_stage_links(stage: Stage, depends_on: Iterable[Stage]) -> None:
    variant = stage.variant if stage.variant_id is not None else None
    if variant is not None and variant.campaign_id != stage.campaign_id:
        raise ValidationError({"variant": "that item is not in this campaign"})
    for other in depends_on:
        if other.campaign_id != stage.campaign_id:
            raise ValidationError({"depends_on": f"stage {other.pk} is not in this campaign"})
        if stage.pk is not None and other.pk == stage.pk:
            raise ValidationError({"depends_on": "a stage cannot depend on itself"})
