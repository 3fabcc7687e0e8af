"""Plan the next campaign from this one (docs/domain.md §21): a new draft with the same plan,
written through the campaigns services (`create_campaign`, `create_item`, `add_stage`,
`change_stage`, `add_stop_rule`, `reserve_lot`), so it takes the same checks as a plan typed
by hand.

Every field of the campaign, its items, stages, stop rules and lots is copied, read from the
models' own field lists, except those in `NOT_COPIED` (each with its reason). Planned hours are
copied as the predecessor planned them: calibration is applied once, by the clone's forecast
(§20). Where the team's calibration median applies (from 3 observations, this campaign's own
included), the calibrated figure is said beside them in the clone's `inherited_uncertainties`
("22.00 h planned before; × 1.30 ... = 28.60 h, which the forecast applies"), never multiplied
into the plan as well.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from django.db import models, transaction

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

# Fields deliberately not copied, and why. Every other concrete field is (`copied_fields`).
NOT_COPIED: dict[type[models.Model], dict[str, str]] = {
    Campaign: {
        "id": "a new row",
        "title": "the clone is titled '<title> (next)'",
        "status": "the clone is a new draft",
        "conclusion": "the predecessor's answer, not the next campaign's",
        "inherited_uncertainties": "computed: what the predecessor left open",
        "planned_from": "set to the predecessor",
        "created_by": "who plans the next campaign",
        "created_at": "set on creation",
        "updated_at": "set on save",
        "committed_at": "the clone is not committed",
        "committed_by": "the clone is not committed",
        "closed_at": "the clone is not closed",
        "closed_by": "the clone is not closed",
    },
    PlannedItem: {
        "id": "a new row",
        "campaign": "the clone",
        "status": "every item is planned again (cut items are not copied at all)",
    },
    Stage: {
        "id": "a new row",
        "campaign": "the clone",
        "variant": "the clone's copy of the item",
        "observed_hours": "what the predecessor's stage took, not a plan",
        "deviation_note": "explains the predecessor's observed hours (inherited as uncertainty)",
        "observed_at": "when the predecessor's hours were observed",
        "observed_reason": "why the predecessor's typed hours differed from its runs'",
    },
    StopRule: {
        "id": "a new row",
        "campaign": "the clone",
        "created_at": "set on creation",
    },
    LotReservation: {
        "id": "a new row",
        "campaign": "the clone",
        "start": "a date in the predecessor's calendar: the next campaign books its own",
    },
}


def copied_fields(model: type[models.Model]) -> list[str]:
    """The concrete fields the clone copies from `model`'s rows (the many-to-many stage
    dependencies are copied separately, mapped onto the clone's stages)."""
    skip = NOT_COPIED[model]
    return [f.name for f in model._meta.concrete_fields if f.name not in skip]


def _values(row: models.Model) -> dict[str, Any]:
    """The copied fields of `row` as service keyword arguments (foreign keys by id)."""
    values: dict[str, Any] = {}
    for name in copied_fields(type(row)):
        f = row._meta.get_field(name)
        values[f.attname] = copy.deepcopy(getattr(row, f.attname))  # type: ignore[union-attr]
    return values


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


@dataclass
class _Calibrator:
    """Notes planned hours x the team's calibration median beside the planned hours (§20)."""

    calibrations: Sequence[calibration.Calibration]
    known_gpus: Sequence[str]
    adjustments: list[dict[str, Any]] = field(default_factory=list)

    def __call__(self, what: str, kind: str, gpu: str, hours: Decimal) -> Decimal:
        found = calibration.applicable(
            self.calibrations, kind, calibration.gpu_in(gpu, self.known_gpus)
        )
        calibrated = _scaled(hours, found)
        if found is not None and calibrated != hours:
            self.adjustments.append(
                {
                    "kind": "calibrated_hours",
                    "subject": what,
                    "text": f"{hours} h planned before × {found.median:.2f} (median of "
                    f"{found.count} {kind} observations in {found.source_names()}) = "
                    f"{calibrated} h calibrated; the plan keeps {hours} h and the forecast "
                    "applies the calibration once",
                }
            )
        return hours  # uncalibrated: the forecast multiplies, not the plan as well


def _clone_items(
    source: Campaign, clone: Campaign, adjusted: _Calibrator, user: Any
) -> dict[int, PlannedItem]:
    items: dict[int, PlannedItem] = {}
    for item in source.items.exclude(status=ItemStatus.CUT).order_by("id"):
        values = _values(item)
        values["planned_hours"] = adjusted(item.name, "training", item.gpu, item.planned_hours)
        items[item.pk] = campaign_services.create_item(campaign=clone, user=user, **values)
    return items


def _clone_stages(
    source: Campaign,
    clone: Campaign,
    items: dict[int, PlannedItem],
    adjusted: _Calibrator,
    user: Any,
) -> None:
    stages: dict[int, Stage] = {}
    originals = list(source.stages.prefetch_related("depends_on").order_by("id"))
    for stage in originals:
        if stage.variant_id is not None and stage.variant_id not in items:
            continue  # the stage of a cut item goes with it
        linked = items.get(stage.variant_id) if stage.variant_id else None
        gpu = (linked.gpu if linked is not None else "") or stage.resource
        values = _values(stage)
        values["planned_hours"] = adjusted(
            f"stage {stage.name}", stage.kind, gpu, stage.planned_hours
        )
        stages[stage.pk] = campaign_services.add_stage(
            campaign=clone, user=user, variant=linked, **values
        )
    # Dependencies once every stage exists (a stage may depend on a later one).
    for stage in originals:
        depends_on = [stages[d.pk] for d in stage.depends_on.all() if d.pk in stages]
        if stage.pk in stages and depends_on:
            campaign_services.change_stage(stage=stages[stage.pk], user=user, depends_on=depends_on)


@transaction.atomic
def clone_campaign(
    *,
    campaign: Campaign,
    user: Any = None,
    extra_uncertainties: Sequence[dict[str, Any]] = (),
) -> Campaign:
    """A new draft planned from `campaign`: every field of it, of its items (not the cut ones),
    stages, stop rules and lots but those in `NOT_COPIED`, with planned hours × the team's
    calibration median where one applies, and what it left open in `inherited_uncertainties`
    (plus `extra_uncertainties`, e.g. the ledger's failed deliverable checks)."""
    source = Campaign.objects.select_for_update(no_key=True).get(pk=campaign.pk)
    adjusted = _Calibrator(
        team_calibrations(source.team_id), list(GpuModel.objects.values_list("name", flat=True))
    )
    uncertainties = [*_uncertainties(source), *extra_uncertainties]
    clone = campaign_services.create_campaign(
        user=user,
        title=f"{source.title} (next)"[:200],
        planned_from=source,
        **_values(source),
    )
    items = _clone_items(source, clone, adjusted, user)
    _clone_stages(source, clone, items, adjusted, user)
    for rule in source.stop_rules.order_by("id"):
        campaign_services.add_stop_rule(campaign=clone, user=user, **_values(rule))
    for lot in source.lots.order_by("id"):
        campaign_services.reserve_lot(campaign=clone, user=user, **_values(lot))
    clone.inherited_uncertainties = [*uncertainties, *adjusted.adjustments]
    clone.save(update_fields=["inherited_uncertainties", "updated_at"])
    return clone
