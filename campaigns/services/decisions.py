"""Decision points (docs/domain.md §6): planned as pending points, then taken with who decided
what and why; a cut names the optional items it cuts, which keep their rows with status `cut`."""

from __future__ import annotations

from collections.abc import Sequence

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from campaigns import events
from campaigns.models import Campaign, DecisionPoint, ItemStatus, Outcome, PlannedItem, Tier
from campaigns.services.campaigns import lock_campaign, real_user


def check_decision(
    *,
    campaign: Campaign,
    outcome: str,
    rationale: str,
    cut_variants: Sequence[PlannedItem] = (),
) -> None:
    """A decision says why; a cut names the optional items it cuts (docs/domain.md §6)."""
    campaign.refuse_if_closed()
    if outcome not in (Outcome.CONTINUE, Outcome.CUT, Outcome.REVISE):
        raise ValidationError({"outcome": "a decision is continue, cut or revise"})
    if outcome == Outcome.CUT and not cut_variants:
        raise ValidationError({"cut_variants": "a cut names the items it cuts"})
    if outcome != Outcome.CUT and cut_variants:
        raise ValidationError({"cut_variants": "only a 'cut' decision cuts items"})
    for item in cut_variants:
        if item.campaign_id != campaign.pk:
            raise ValidationError({"cut_variants": f"item {item.pk} is not in this campaign"})
        if item.tier == Tier.MANDATORY:
            raise ValidationError(
                {"cut_variants": f"'{item.name}' is mandatory: revise the question instead"}
            )
    if not (rationale or "").strip():
        raise ValidationError({"rationale": "a decision says why"})


@transaction.atomic
def record_decision(
    *,
    campaign: Campaign,
    acting_user: User | None = None,
    outcome: str,
    rationale: str,
    cut_variants: Sequence[PlannedItem] = (),
    label: str = "after the pilot",
) -> DecisionPoint:
    """Record who decided what and why; a cut item keeps its row with status `cut`."""
    locked = lock_campaign(campaign)
    check_decision(campaign=locked, outcome=outcome, rationale=rationale, cut_variants=cut_variants)
    label = (label or "").strip() or "after the pilot"
    # Fill the planned (pending) decision point with this label, if there is one.
    decision = locked.decisions.filter(outcome=Outcome.PENDING, label=label).order_by(
        "id"
    ).first() or DecisionPoint(campaign=locked, label=label)
    decision.outcome = outcome
    decision.rationale = rationale.strip()
    decision.decided_by = real_user(acting_user)
    decision.decided_at = timezone.now()
    decision.save()
    if cut_variants:
        decision.cut_variants.set(cut_variants)
        PlannedItem.objects.filter(pk__in=[i.pk for i in cut_variants]).update(
            status=ItemStatus.CUT
        )
        events.emit(events.PLAN_CHANGED, campaign_id=locked.pk)
    return decision


@transaction.atomic
def plan_decision_point(
    *, campaign: Campaign, acting_user: User | None = None, label: str, rationale: str = ""
) -> DecisionPoint:
    """A pending decision point in the plan (e.g. "after the pilot"), filled later; its
    `rationale` is the planner's note until then (what the decision will weigh)."""
    locked = lock_campaign(campaign)
    locked.refuse_if_closed()
    if not (label or "").strip():
        raise ValidationError({"label": "name the point, e.g. 'after the pilot'"})
    return DecisionPoint.objects.create(
        campaign=locked, label=label.strip(), rationale=(rationale or "").strip()
    )


@transaction.atomic
def note_decision_point(
    *, decision: DecisionPoint, acting_user: User | None = None, label: str, rationale: str = ""
) -> DecisionPoint:
    """Rename a pending decision point or change its note; a taken decision is a record."""
    locked = (
        DecisionPoint.objects.select_for_update().select_related("campaign").get(pk=decision.pk)
    )
    locked.campaign.refuse_if_closed()
    if locked.outcome != Outcome.PENDING:
        raise ValidationError("A decision is a record: add a new decision instead.")
    if not (label or "").strip():
        raise ValidationError({"label": "name the point, e.g. 'after the pilot'"})
    locked.label, locked.rationale = label.strip(), (rationale or "").strip()
    locked.save(update_fields=["label", "rationale"])
    return locked
