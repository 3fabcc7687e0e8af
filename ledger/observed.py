"""Observed hours of a stage: what happened, set beside the frozen plan (never into it)."""

from __future__ import annotations

from decimal import Decimal

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from campaigns.models import CampaignStatus, Stage


class PlanNotCommitted(Exception):
    """Observed hours are compared with a frozen baseline; a draft has none yet."""


def planned_hours_of(stage: Stage) -> Decimal:
    """The stage's reserved hours as the baseline froze them.

    A stage added after commit was never reserved: zero, so any hours it took are a deviation
    to explain.
    """
    baseline = stage.campaign.baseline_or_none()
    if baseline is None:
        return Decimal(stage.planned_hours)
    for frozen in baseline.snapshot.get("stages", []):
        if frozen.get("id") == stage.pk:
            return Decimal(frozen["planned_hours"])
    return Decimal(0)


@transaction.atomic
def record_observed_hours(
    stage: Stage, *, observed_hours: Decimal, deviation_note: str = ""
) -> Stage:
    """Store the observed hours; more than 10% away from the plan needs a deviation note."""
    locked = Stage.objects.select_for_update().select_related("campaign").get(pk=stage.pk)
    if locked.campaign.status == CampaignStatus.DRAFT:
        raise PlanNotCommitted(
            "the plan is still a draft: commit it first, observed hours are compared with the "
            "frozen baseline"
        )
    if observed_hours < 0:
        raise ValidationError({"observed_hours": "hours cannot be negative"})
    note = deviation_note.strip()
    planned = planned_hours_of(locked)
    # The model's rule, applied to the frozen figure rather than to whatever the row says now.
    if Stage(planned_hours=planned).needs_deviation_note(observed_hours) and not note:
        raise ValidationError(
            {
                "deviation_note": (
                    f"{observed_hours} h observed for {planned} h planned is more than 10% "
                    "away from the plan: explain the deviation"
                )
            }
        )
    now = timezone.now()
    # update() touches only these columns: the plan's own fields (and the baseline) stay as
    # they were frozen.
    Stage.objects.filter(pk=locked.pk).update(
        observed_hours=observed_hours, deviation_note=note, observed_at=now
    )
    locked.observed_hours, locked.deviation_note, locked.observed_at = observed_hours, note, now
    return locked
