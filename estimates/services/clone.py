"""Plan the next campaign from this one (docs/domain.md §21)."""

from __future__ import annotations

from collections.abc import Sequence
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from django.db import transaction

from campaigns import services as campaign_services
from campaigns.models import (
    Campaign,
    ItemRole,
    ItemStatus,
    LotReservation,
    Outcome,
    PlannedItem,
    RunStatus,
    Stage,
    StopRule,
)
from catalog.models import GpuModel
from estimates.domain import calibration
from estimates.selectors.calibration import team_calibrations

# --- The next campaign (docs/domain.md §21) ------------------------------------------------------


def _uncertainties(campaign: Campaign) -> list[dict[str, Any]]:
    """What the campaign left open, from the campaigns' own records: deviation notes, cut items,
    stopped runs and failed data or resume checks."""
    found: list[dict[str, Any]] = []
    for name, note in (
        campaign.stages.exclude(deviation_note="")
        .order_by("id")
        .values_list("name", "deviation_note")
    ):
        found.append({"kind": "deviation", "subject": name, "text": note})
    for decision in campaign.decisions.filter(outcome=Outcome.CUT).prefetch_related("cut_variants"):
        for item in decision.cut_variants.all():
            found.append(
                {
                    "kind": "cut_item",
                    "subject": item.name,
                    "text": f"cut at the decision “{decision.label}”: {decision.rationale}",
                }
            )
    for run in campaign.runs.filter(
        variant__role__in=[ItemRole.DATA_CHECK, ItemRole.RESUME_CHECK],
        status__in=[RunStatus.STOPPED, RunStatus.FAILED],
    ).select_related("variant"):
        why = run.stop_reason or "the run failed"
        found.append(
            {
                "kind": "failed_check",
                "subject": run.variant.name if run.variant else run.run_id,
                "text": f"run {run.run_id}: {why}",
            }
        )
    return found


def _scaled(hours: Decimal, found: calibration.Calibration | None) -> Decimal:
    if found is None:
        return hours
    return (hours * Decimal(repr(found.median))).quantize(Decimal("0.01"), ROUND_HALF_UP)


@transaction.atomic
def clone_campaign(
    *,
    campaign: Campaign,
    user: Any = None,
    extra_uncertainties: Sequence[dict[str, Any]] = (),
) -> Campaign:
    """A new draft planned from `campaign`: its question, corpus, window, budget, items (not the
    cut ones), stages, stop rules and lots, with planned hours × the team's calibration median
    where one applies (§20: from 3 observations, this campaign's own included), and what it left
    open in `inherited_uncertainties` (plus `extra_uncertainties`, e.g. the ledger's failed
    deliverable checks)."""
    source = Campaign.objects.select_for_update().get(pk=campaign.pk)
    calibrations = team_calibrations(source.team_id)
    known = list(GpuModel.objects.values_list("name", flat=True))
    adjustments: list[dict[str, Any]] = []

    def adjusted(what: str, kind: str, gpu: str, hours: Decimal) -> Decimal:
        found = calibration.applicable(calibrations, kind, calibration.gpu_in(gpu, known))
        new = _scaled(hours, found)
        if found is not None and new != hours:
            adjustments.append(
                {
                    "kind": "calibrated_hours",
                    "subject": what,
                    "text": f"{hours} h planned before × {found.median:.2f} (median of "
                    f"{found.count} {kind} observations in {found.source_names()}) = {new} h",
                }
            )
        return new

    uncertainties = [*_uncertainties(source), *extra_uncertainties]
    clone = campaign_services.create_campaign(
        user=user,
        team=source.team,
        title=f"{source.title} (next)"[:200],
        question=source.question,
        corpus_name=source.corpus_name,
        corpus_revision=source.corpus_revision,
        expected_deliverables=source.expected_deliverables,
        decision_threshold=source.decision_threshold,
        window_hours=source.window_hours,
        budget=source.budget,
        currency=source.currency,
        hourly_rate_per_gpu=source.hourly_rate_per_gpu,
        required_checkpoint_components=source.required_checkpoint_components,
        planned_from=source,
    )
    items: dict[int, PlannedItem] = {}
    training_gpu: dict[int, str] = {}
    for item in source.items.exclude(status=ItemStatus.CUT).order_by("id"):
        items[item.pk] = PlannedItem.objects.create(
            campaign=clone,
            name=item.name,
            role=item.role,
            tier=item.tier,
            config=item.config,
            planned_hours=adjusted(item.name, "training", item.gpu, item.planned_hours),
            prep_hours=item.prep_hours,
            rationale=item.rationale,
            gpu=item.gpu,
        )
        training_gpu[item.pk] = item.gpu
    stages: dict[int, Stage] = {}
    originals = list(source.stages.prefetch_related("depends_on").order_by("id"))
    for stage in originals:
        if stage.variant_id is not None and stage.variant_id not in items:
            continue  # the stage of a cut item goes with it
        gpu = training_gpu.get(stage.variant_id or 0) or stage.resource
        stages[stage.pk] = Stage.objects.create(
            campaign=clone,
            name=stage.name,
            kind=stage.kind,
            machine=stage.machine,
            resource=stage.resource,
            variant=items.get(stage.variant_id) if stage.variant_id else None,
            planned_hours=adjusted(f"stage {stage.name}", stage.kind, gpu, stage.planned_hours),
        )
    for stage in originals:
        if stage.pk in stages:
            stages[stage.pk].depends_on.set(
                [stages[d.pk] for d in stage.depends_on.all() if d.pk in stages]
            )
    for rule in source.stop_rules.order_by("id"):
        StopRule.objects.create(
            campaign=clone,
            kind=rule.kind,
            metric=rule.metric,
            comparator=rule.comparator,
            threshold=rule.threshold,
            description=rule.description,
        )
    for lot in source.lots.order_by("id"):
        LotReservation.objects.create(campaign=clone, plan_id=lot.plan_id, quantity=lot.quantity)
    clone.inherited_uncertainties = [*uncertainties, *adjustments]
    clone.save(update_fields=["inherited_uncertainties", "updated_at"])
    return clone
