"""Which service writes each inline row of the campaign page and which removes one: the admin
never saves a plan row itself (campaigns/services)."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError

from campaigns.admin.forms import OBSERVED_FIELDS, STAGE_FIELDS, LotForm, StopRuleForm
from campaigns.models import (
    Campaign,
    DecisionPoint,
    LotReservation,
    Outcome,
    PlannedItem,
    Stage,
    StopRule,
)
from campaigns.services.decisions import note_decision_point, plan_decision_point, record_decision
from campaigns.services.items import amend_item, create_item, remove_item
from campaigns.services.lots import change_lot, release_lot, reserve_lot
from campaigns.services.observed_hours import record_observed_hours
from campaigns.services.stages import add_stage, change_stage, remove_stage
from campaigns.services.stop_rules import add_stop_rule, change_stop_rule, remove_stop_rule


def _save_item(campaign: Campaign, form: Any, user: Any) -> None:
    reason = form.cleaned_data.get("amendment_reason") or ""
    if form.instance.pk is None:
        create_item(campaign=campaign, acting_user=user, amendment_reason=reason, **form.changes())
    else:
        amend_item(item=form.instance, acting_user=user, reason=reason, **form.changes())


def _row_saver(add: Any, change: Any, param: str, fields: list[str]) -> Any:
    """Save an inline row through the service that adds such a row, or the one that changes it."""

    def save(campaign: Campaign, form: Any, user: Any) -> None:
        values = {f: form.cleaned_data.get(f) for f in fields}
        if form.instance.pk is None:
            add(campaign=campaign, acting_user=user, **values)
        else:
            stored = type(form.instance).objects.get(pk=form.instance.pk)
            change(**{param: stored}, acting_user=user, **values)

    return save


_save_stop_rule = _row_saver(add_stop_rule, change_stop_rule, "rule", StopRuleForm.Meta.fields)
_save_lot = _row_saver(reserve_lot, change_lot, "lot", LotForm.Meta.fields)


def _save_stage(campaign: Campaign, form: Any, user: Any) -> None:
    data = form.cleaned_data
    if form.instance.pk is not None and not campaign.is_draft:
        if OBSERVED_FIELDS & set(form.changed_data) and data.get("observed_hours") is not None:
            record_observed_hours(
                stage=form.instance,
                acting_user=user,
                observed_hours=data["observed_hours"],
                deviation_note=data.get("deviation_note") or "",
                observed_reason=data.get("observed_reason") or "",
            )
        return
    fields = {f: data.get(f) for f in STAGE_FIELDS if f not in OBSERVED_FIELDS | {"depends_on"}}
    depends_on = list(data.get("depends_on") or [])
    # Names typed for rows of the same page: the items and the stages above are saved by now.
    typed = getattr(form, "page_names", {})
    if data.get("item_name"):
        fields["variant"] = _by_name(
            campaign.items, data["item_name"], "item_name", "item", typed.get(PlannedItem, ())
        )
    for name in form.after_names():
        found = _by_name(campaign.stages, name, "after", "stage", typed.get(Stage, ()))
        if found not in depends_on:
            depends_on.append(found)
    if form.instance.pk is None:
        add_stage(campaign=campaign, acting_user=user, depends_on=depends_on, **fields)
    else:
        change_stage(
            stage=Stage.objects.get(pk=form.instance.pk),
            acting_user=user,
            depends_on=depends_on,
            **fields,
        )


def _by_name(rows: Any, name: str, field: str, what: str, typed: Any = ()) -> Any:
    found = rows.filter(name=name.strip()).order_by("id").first()
    if found is None and name.strip() in typed:
        # The row is on the page but was refused itself: point there, not at a missing name.
        raise ValidationError(
            {field: f"the {what} '{name.strip()}' on this page was refused: correct its row first"}
        )
    if found is None:
        raise ValidationError(
            {
                field: f"no {what} named '{name.strip()}' on this page "
                "(a stage follows the stages above it)"
            }
        )
    return found


def _save_decision(campaign: Campaign, form: Any, user: Any) -> None:
    data = form.cleaned_data
    if data.get("outcome", Outcome.PENDING) == Outcome.PENDING:
        # A planned point keeps its note (the rationale typed before the decision).
        note = {"label": data.get("label") or "", "rationale": data.get("rationale") or ""}
        if form.instance.pk is None:
            plan_decision_point(campaign=campaign, acting_user=user, **note)
        else:
            note_decision_point(decision=form.instance, acting_user=user, **note)
        return
    record_decision(
        campaign=campaign,
        acting_user=user,
        outcome=data["outcome"],
        rationale=data.get("rationale") or "",
        cut_variants=list(data.get("cut_variants") or []),
        label=form.instance.label if form.instance.pk else data.get("label") or "",
    )


# Which service writes each inline's rows, and which removes one.
INLINE_WRITERS: dict[type[Any], tuple[Any, Any]] = {
    PlannedItem: (_save_item, lambda obj, user: remove_item(item=obj, acting_user=user)),
    StopRule: (_save_stop_rule, lambda obj, user: remove_stop_rule(rule=obj, acting_user=user)),
    Stage: (_save_stage, lambda obj, user: remove_stage(stage=obj, acting_user=user)),
    DecisionPoint: (_save_decision, None),
    LotReservation: (_save_lot, lambda obj, user: release_lot(lot=obj, acting_user=user)),
}
