"""Plan the next campaign from this one (docs/domain.md §21): a new draft with the same plan,
written through the campaigns services (`create_campaign`, `create_item`, `add_stage`,
`change_stage`, `add_stop_rule`, `reserve_lot`), so it takes the same checks as a plan typed
by hand.

Every field of the campaign, its items, stages, stop rules and lots is copied, read from the
models' own field lists, except those in `NOT_COPIED` (each with its reason). Planned hours are
the predecessor's × the lesson of their stage kind and GPU (estimates/domain/next_plan.py, the
function the closing report's "next time" advice reads too): the team's median from 3
observations, else the predecessor's own observed ÷ committed ratio, else as planned before.
Each figure records where it came from (`calibrated_from`: the ratio, its source and spread),
so the clone's forecast applies no calibration on top of it; `inherited_uncertainties` says it
in words, figure by figure.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from django.contrib.auth.models import User
from django.db import models, transaction

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
from campaigns.services.campaigns import create_campaign
from campaigns.services.items import create_item
from campaigns.services.lots import reserve_lot
from campaigns.services.stages import add_stage, change_stage
from campaigns.services.stop_rules import add_stop_rule
from estimates.domain import calibration, next_plan
from estimates.selectors.calibration import known_gpus
from estimates.selectors.next_plan import campaign_lessons

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
        "calibrated_from": "set from the lesson the clone applies to the planned hours",
    },
    Stage: {
        "id": "a new row",
        "campaign": "the clone",
        "variant": "the clone's copy of the item",
        "observed_hours": "what the predecessor's stage took, not a plan",
        "deviation_note": "explains the predecessor's observed hours (inherited as uncertainty)",
        "observed_at": "when the predecessor's hours were observed",
        "observed_reason": "why the predecessor's typed hours differed from its runs'",
        "calibrated_from": "set from the lesson the clone applies to the planned hours",
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


def _spread_words(spread: Mapping[str, float | None]) -> str:
    low, high = spread.get("min"), spread.get("max")
    return "" if low is None or high is None else f"; spread ×{low:.2f}–×{high:.2f}"


@dataclass
class _Lessons:
    """Applies the predecessor's lessons to each copied figure and says where each came from."""

    source: Campaign
    lessons: next_plan.Lessons
    known_gpus: Sequence[str]
    uncertainties: list[dict[str, Any]] = field(default_factory=list)

    def __call__(self, what: str, key: tuple[str, str], hours: Decimal) -> dict[str, Any]:
        """The figure's new planned hours and its `calibrated_from` (the lesson applied)."""
        lesson = self.lessons.lesson(*key)
        new = lesson.apply(hours)
        if lesson.ratio is None:
            self.uncertainties.append(
                {
                    "kind": "planned_hours",
                    "subject": what,
                    "text": f"{hours} h as planned before: {lesson.words}",
                }
            )
        else:
            self.uncertainties.append(
                {
                    "kind": "calibrated_hours",
                    "subject": what,
                    "text": f"{hours} h planned before × {lesson.ratio:.2f} ({lesson.words}"
                    f"{_spread_words(lesson.spread)}) = {new} h calibrated; the forecast "
                    "applies no calibration on top",
                }
            )
        provenance = {
            **lesson.as_json(),
            "planned_before": str(hours),
            "hours": str(new),
            "from_campaign": {"id": self.source.pk, "title": self.source.title},
        }
        return {"planned_hours": new, "calibrated_from": provenance}

    def stage_key(self, stage: Stage, item_gpu: str) -> tuple[str, str]:
        return stage.kind, calibration.stage_gpu(item_gpu, stage.resource, self.known_gpus)


def _clone_items(
    source: Campaign,
    clone: Campaign,
    lessons: _Lessons,
    stages: Sequence[Stage],
    acting_user: User | None,
) -> dict[int, PlannedItem]:
    items: dict[int, PlannedItem] = {}
    for item in source.items.exclude(status=ItemStatus.CUT).order_by("id"):
        # The lesson of the stages its forecast rescales (next_plan.item_key).
        own = [
            (s.kind, s.machine, lessons.stage_key(s, item.gpu)[1])
            for s in stages
            if s.variant_id == item.pk
        ]
        key = next_plan.item_key(own, calibration.gpu_in(item.gpu, lessons.known_gpus))
        values = {**_values(item), **lessons(item.name, key, item.planned_hours)}
        items[item.pk] = create_item(campaign=clone, acting_user=acting_user, **values)
    return items


def _clone_stages(
    clone: Campaign,
    originals: Sequence[Stage],
    items: dict[int, PlannedItem],
    lessons: _Lessons,
    acting_user: User | None,
) -> None:
    stages: dict[int, Stage] = {}
    for stage in originals:
        if stage.variant_id is not None and stage.variant_id not in items:
            continue  # the stage of a cut item goes with it
        linked = items.get(stage.variant_id) if stage.variant_id else None
        key = lessons.stage_key(stage, linked.gpu if linked is not None else "")
        values = {
            **_values(stage),
            **lessons(f"stage {stage.name}", key, stage.planned_hours),
        }
        stages[stage.pk] = add_stage(
            campaign=clone, acting_user=acting_user, variant=linked, **values
        )
    # Dependencies once every stage exists (a stage may depend on a later one).
    for stage in originals:
        depends_on = [stages[d.pk] for d in stage.depends_on.all() if d.pk in stages]
        if stage.pk in stages and depends_on:
            change_stage(stage=stages[stage.pk], acting_user=acting_user, depends_on=depends_on)


@transaction.atomic
def clone_campaign(
    *,
    campaign: Campaign,
    acting_user: User | None = None,
    extra_uncertainties: Sequence[dict[str, Any]] = (),
) -> Campaign:
    """A new draft planned from `campaign`: every field of it, of its items (not the cut ones),
    stages, stop rules and lots but those in `NOT_COPIED`, with planned hours × the lesson of
    their kind and GPU (the rule above), and what it left open in `inherited_uncertainties`
    (plus `extra_uncertainties`, e.g. the ledger's failed deliverable checks)."""
    source = Campaign.objects.select_for_update(no_key=True).get(pk=campaign.pk)
    lessons = _Lessons(source, campaign_lessons(source), known_gpus())
    uncertainties = [*_uncertainties(source), *extra_uncertainties]
    clone = create_campaign(
        acting_user=acting_user,
        title=f"{source.title} (next)"[:200],
        planned_from=source,
        **_values(source),
    )
    originals = list(source.stages.prefetch_related("depends_on").order_by("id"))
    items = _clone_items(source, clone, lessons, originals, acting_user)
    _clone_stages(clone, originals, items, lessons, acting_user)
    for rule in source.stop_rules.order_by("id"):
        add_stop_rule(campaign=clone, acting_user=acting_user, **_values(rule))
    for lot in source.lots.order_by("id"):
        reserve_lot(campaign=clone, acting_user=acting_user, **_values(lot))
    clone.inherited_uncertainties = [*uncertainties, *lessons.uncertainties]
    clone.save(update_fields=["inherited_uncertainties", "updated_at"])
    return clone
