"""Observed hours: what a stage really took, set beside (never into) the frozen plan, after
commit and before close (docs/domain.md §8). The runs give the figure where the stage has any
(§8.6); a typed figure that differs keeps its reason."""

from __future__ import annotations

from decimal import Decimal

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from campaigns import events
from campaigns.models import Campaign, PlanFrozen, Stage
from campaigns.selectors.observed_hours import reconciled


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


def check_takes_observed_hours(campaign: Campaign) -> None:
    campaign.refuse_if_closed()
    if campaign.is_draft:
        raise PlanFrozen(
            "the plan is still a draft: commit it first, observed hours are compared with the "
            "frozen baseline"
        )


def check_observed_hours(
    *, stage: Stage, observed_hours: Decimal, deviation_note: str, observed_reason: str = ""
) -> None:
    """Observed hours are set beside the frozen plan: after commit, never after close, and more
    than 10% away from the frozen figure needs a deviation note (docs/domain.md §8). Where the
    stage's runs already give a figure, a different typed one needs the reason, once (§8.6)."""
    check_takes_observed_hours(stage.campaign)
    if observed_hours < 0:
        raise ValidationError({"observed_hours": "hours cannot be negative"})
    planned = planned_hours_of(stage)
    # The model's rule, applied to the frozen figure rather than to whatever the row says now.
    if (
        Stage(planned_hours=planned).needs_deviation_note(observed_hours)
        and not (deviation_note or "").strip()
    ):
        raise ValidationError(
            {
                "deviation_note": (
                    f"{observed_hours} h observed for {planned} h planned is more than 10% "
                    "away from the plan: explain the deviation"
                )
            }
        )
    seen = reconciled(stage.campaign).stages.get(stage.pk)
    runs_hours = seen.runs_hours if seen is not None else None
    if (
        runs_hours is not None
        and observed_hours != runs_hours
        and not (observed_reason or "").strip()
        and not (seen is not None and seen.reason.strip())
    ):
        raise ValidationError(
            {
                "observed_reason": (
                    f"the runs on this stage's item took {runs_hours} h: say why the stage "
                    f"took {observed_hours} h (asked once, kept with the figure)"
                )
            }
        )


@transaction.atomic
def record_observed_hours(
    *,
    stage: Stage,
    acting_user: User | None = None,
    observed_hours: Decimal,
    deviation_note: str = "",
    observed_reason: str = "",
) -> Stage:
    """Store what a stage really took, beside (never into) the frozen plan: the runs give it
    where the stage has any (docs/domain.md §8.6); a typed figure that differs keeps its reason."""
    locked = (
        Stage.objects.select_for_update(no_key=True).select_related("campaign").get(pk=stage.pk)
    )
    check_observed_hours(
        stage=locked,
        observed_hours=observed_hours,
        deviation_note=deviation_note,
        observed_reason=observed_reason,
    )
    note = (deviation_note or "").strip()
    reason = (observed_reason or "").strip() or locked.observed_reason
    now = timezone.now()
    # update() touches only these columns: the plan's own fields stay as they were frozen.
    Stage.objects.filter(pk=locked.pk).update(
        observed_hours=observed_hours, deviation_note=note, observed_reason=reason, observed_at=now
    )
    locked.observed_hours, locked.deviation_note, locked.observed_at = observed_hours, note, now
    locked.observed_reason = reason
    events.emit(events.PLAN_CHANGED, campaign_id=locked.campaign_id)
    return locked
