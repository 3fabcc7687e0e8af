"""The campaign page's forms. Each refusal a service would raise is asked first in the form's
`clean()` through the service's own `check_*` function, so it shows beside its field before
anything is written (campaigns/services): each rule is written once."""

from __future__ import annotations

from typing import Any

from django import forms
from django.core.exceptions import ValidationError
from rest_framework import serializers as drf_serializers

from campaigns.api import estimate_spec
from campaigns.domain.stop_rules import COMPONENT_ORDER
from campaigns.models import (
    AMENDABLE_ITEM_FIELDS,
    WORK_FIELDS,
    Campaign,
    CampaignClosed,
    DecisionPoint,
    LotReservation,
    Outcome,
    PlanFrozen,
    PlannedItem,
    Stage,
    StopRule,
)
from campaigns.models.field_lists import (
    CAMPAIGN_FIELDS,
    STAGE_OBSERVED_FIELDS,
    STAGE_PLAN_FIELDS,
    STOP_RULE_FIELDS,
)
from campaigns.services.campaigns import check_campaign_change
from campaigns.services.decisions import check_decision
from campaigns.services.items import check_item
from campaigns.services.observed_hours import check_observed_hours


def refusal_to_form(form: forms.BaseForm, exc: Exception, field: str | None = None) -> None:
    """A service's refusal shown on the form: field errors beside their fields, a state
    refusal (frozen plan, closed campaign) at the top of the form."""
    if isinstance(exc, ValidationError) and hasattr(exc, "error_dict"):
        for name, errors in exc.error_dict.items():
            target = name if name in form.fields else None
            for error in errors:
                form.add_error(target, error)
        return
    form.add_error(field, str(exc))


def campaign_of(form: forms.ModelForm[Any]) -> Campaign | None:
    campaign = getattr(form, "parent_campaign", None)
    if campaign is None and form.instance.pk:
        campaign = form.instance.campaign
    return campaign


class EmptyJsonIsDefault(forms.ModelForm[Any]):
    """An emptied JSON box means the field's default ({} or []), not null: the columns are not
    null and the model's own validation skips blank values."""

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        for name, field in self.fields.items():
            if isinstance(field, forms.JSONField) and name in data and data[name] is None:
                model_field = self._meta.model._meta.get_field(name)
                if not model_field.null:
                    data[name] = model_field.get_default()
        return data


class CampaignChildForm(EmptyJsonIsDefault):
    """An inline row's form; the inline hands it the campaign being edited."""

    parent_campaign: Campaign | None = None


# The work a pilot rescales, typed in the item's own row (the rest of its work in the table
# "Items' work" below: the row must fit 1366 px).
ROW_WORK_FIELDS = ["tokens", "samples"]
OTHER_WORK_FIELDS = [f for f in WORK_FIELDS if f not in ROW_WORK_FIELDS]

ITEM_FIELDS = [
    "name",
    "role",
    "tier",
    "planned_hours",
    "prep_hours",
    "gpu",
    "config",
    "rationale",
]


class PlannedItemForm(CampaignChildForm):
    """An item's row, with the work the forecast turns into hours (docs/domain.md §10): the
    pilot rescales what the row states, so it is typed with the item, not after a save."""

    # A short header and box: after commit this column is what would push the row past 1366 px.
    amendment_reason = forms.CharField(
        required=False,
        label="reason",
        widget=forms.TextInput(attrs={"size": 6, "placeholder": "why it changes"}),
        help_text="After commit: why this item is added or changes (recorded as an amendment).",
    )

    class Meta:
        model = PlannedItem
        fields = [*ITEM_FIELDS, *ROW_WORK_FIELDS]
        widgets = {
            "name": forms.TextInput(attrs={"size": 12}),
            "rationale": forms.Textarea(attrs={"rows": 1, "cols": 8}),
            "config": forms.Textarea(attrs={"rows": 1, "cols": 8}),
            "estimate_spec": forms.Textarea(attrs={"rows": 1, "cols": 6}),
            **{
                f: forms.NumberInput(attrs={"style": "width:4.2em", "step": "any"})
                for f in WORK_FIELDS
            },
        }
        # Short headers: the row must fit 1366 px (the help text says each in full).
        labels = {"tokens": "tokens", "samples": "samples"}

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # The model's ranges (positive, finite) checked on the form: this form skips the
        # model's own validation (_post_clean below).
        for name in WORK_FIELDS:
            if name in self.fields:
                field = self.fields[name]
                field.validators = [
                    *field.validators,
                    *getattr(PlannedItem._meta.get_field(name), "validators", []),
                ]

    def clean_estimate_spec(self) -> Any:
        # h17: checked by the preview's serializers, as through the API (docs/domain.md §24.9).
        value = self.cleaned_data.get("estimate_spec")
        if value in (None, ""):
            return None
        if not isinstance(value, dict):
            raise forms.ValidationError("Give a JSON object: model, training and hardware.")
        try:
            return estimate_spec.validate(value)
        except drf_serializers.ValidationError as error:
            raise forms.ValidationError(str(error.detail)) from None

    def changes(self) -> dict[str, Any]:
        """The posted fields that differ from what is stored (all of them for a new item)."""
        data = self.cleaned_data
        if not self.instance.pk:
            return {f: data[f] for f in [*ITEM_FIELDS, *ROW_WORK_FIELDS] if f in data}
        stored = PlannedItem.objects.get(pk=self.instance.pk)
        return {
            f: data[f] for f in AMENDABLE_ITEM_FIELDS if f in data and data[f] != getattr(stored, f)
        }

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        campaign = campaign_of(self)
        if campaign is None or self.errors or not self.has_changed():
            return data
        try:
            check_item(
                campaign=campaign,
                item=self.instance if self.instance.pk else None,
                changes=self.changes(),
                amendment_reason=data.get("amendment_reason") or "",
            )
        except (ValidationError, PlanFrozen, CampaignClosed) as exc:
            refusal_to_form(self, exc)
        return data

    def _post_clean(self) -> None:
        # Uniqueness and amendments are the service's rules (clean() above); the model's own
        # validation would need the campaign, which a new inline row does not have yet.
        pass


class ItemWorkForm(PlannedItemForm):
    """The forecast's inputs of an item alone (docs/domain.md §10); the campaign page edits
    them in the item's own row (PlannedItemForm)."""

    class Meta:
        model = PlannedItem
        # The estimate spec is a JSON object too wide for the item's row (1366 px).
        fields = [*OTHER_WORK_FIELDS, "estimate_spec"]
        widgets = {
            **{
                f: forms.NumberInput(attrs={"style": "width:7em", "step": "any"})
                for f in WORK_FIELDS
            },
            "estimate_spec": forms.Textarea(attrs={"rows": 1, "cols": 24}),
        }


class StopRuleForm(CampaignChildForm):
    class Meta:
        model = StopRule
        fields = list(STOP_RULE_FIELDS)
        widgets = {
            "description": forms.Textarea(attrs={"rows": 1, "cols": 24}),
            "grace_steps": forms.NumberInput(attrs={"style": "width: 6em"}),
            "grace_minutes": forms.NumberInput(attrs={"style": "width: 5em"}),
            "for_minutes": forms.NumberInput(attrs={"style": "width: 4em"}),
        }


STAGE_FIELDS = [*STAGE_PLAN_FIELDS, *STAGE_OBSERVED_FIELDS]
OBSERVED_FIELDS = set(STAGE_OBSERVED_FIELDS)


class StageForm(CampaignChildForm):
    # Planning in one pass: a new stage names its item and the stages it follows by name, so
    # they may be rows of the same unsaved page (resolved in table order as the page saves).
    item_name = forms.CharField(
        required=False,
        label="item (by name)",
        widget=forms.TextInput(attrs={"size": 8}),
        help_text="An item of this page, saved or not (instead of choosing one).",
    )
    after = forms.CharField(
        required=False,
        label="after (names)",
        widget=forms.TextInput(attrs={"size": 8}),
        help_text="Stages above this one, saved or not, by name, comma-separated.",
    )

    class Meta:
        model = Stage
        fields = STAGE_FIELDS
        labels = {"observed_hours": "typed hours", "observed_reason": "why not the runs'"}
        help_texts = {
            "observed_hours": "Only where no run stands for the stage, or to correct the runs' "
            "figure (with the reason).",
        }
        widgets = {
            "observed_reason": forms.Textarea(attrs={"rows": 1, "cols": 8}),
            "deviation_note": forms.Textarea(attrs={"rows": 1, "cols": 8}),
        }

    def after_names(self) -> list[str]:
        return [n.strip() for n in (self.cleaned_data.get("after") or "").split(",") if n.strip()]

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        observed = data.get("observed_hours")
        if "observed_hours" not in self.changed_data or observed is None:
            return data
        campaign = campaign_of(self)
        if campaign is None or not self.instance.pk:
            self.add_error(
                "observed_hours",
                "Observed hours are compared with the frozen plan: commit the plan first.",
            )
            return data
        try:
            check_observed_hours(
                stage=self.instance,
                observed_hours=observed,
                deviation_note=data.get("deviation_note") or "",
                observed_reason=data.get("observed_reason") or "",
            )
        except PlanFrozen:
            self.add_error(
                "observed_hours",
                "Observed hours are compared with the frozen plan: commit the plan first.",
            )
        except (ValidationError, CampaignClosed) as exc:
            refusal_to_form(self, exc)
        return data


class DecisionForm(CampaignChildForm):
    class Meta:
        model = DecisionPoint
        fields = ["label", "outcome", "rationale", "cut_variants"]

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        campaign = campaign_of(self)
        if campaign is None or self.errors or not self.has_changed():
            return data
        if self.instance.pk and self.instance.outcome != Outcome.PENDING:
            self.add_error(None, "A decision is a record: add a new decision instead.")
            return data
        if data.get("outcome", Outcome.PENDING) == Outcome.PENDING:
            if data.get("cut_variants"):
                self.add_error("cut_variants", "only a 'cut' decision cuts items")
            return data
        try:
            check_decision(
                campaign=campaign,
                outcome=data["outcome"],
                rationale=data.get("rationale") or "",
                cut_variants=list(data.get("cut_variants") or []),
            )
        except (ValidationError, CampaignClosed) as exc:
            refusal_to_form(self, exc)
        return data

    def _post_clean(self) -> None:
        pass  # the decision's rules are the service's (clean() above)


class LotForm(CampaignChildForm):
    class Meta:
        model = LotReservation
        fields = ["plan", "quantity", "start"]


class CampaignForm(EmptyJsonIsDefault):
    class Meta:
        model = Campaign
        fields = list(CAMPAIGN_FIELDS)
        widgets = {
            "question": forms.Textarea(attrs={"rows": 2}),
            "expected_deliverables": forms.Textarea(attrs={"rows": 2}),
        }

    def clean_required_checkpoint_components(self) -> list[str]:
        """The API's components only: free text here reached the closing report."""
        value = self.cleaned_data.get("required_checkpoint_components")
        if value is None:
            return list(COMPONENT_ORDER)
        if not isinstance(value, list) or not set(map(str, value)) <= set(COMPONENT_ORDER):
            raise ValidationError(
                f"a list of checkpoint components, each one of {', '.join(COMPONENT_ORDER)}"
            )
        return [c for c in COMPONENT_ORDER if c in value]

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if self.instance.pk and self.changed_data:
            try:
                check_campaign_change(self.instance, self.changed_data)
            except (PlanFrozen, CampaignClosed) as exc:
                self.add_error(None, str(exc))
        return data


class CloseCampaignForm(forms.Form):
    """The same fields as `POST /api/v1/campaigns/{id}/close/`."""

    conclusion = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 4, "cols": 80}),
        help_text="What the campaign concluded. A negative result (no variant meets the "
        "threshold) is a valid conclusion.",
    )
    stop_running = forms.BooleanField(
        required=False,
        label="Stop the runs still running",
        help_text="They are stopped with a reason naming the close (a machine that died leaves "
        "runs that never finish).",
    )
