"""The campaign page's inline tables: items, their work, stop rules, stages, decisions, lots and
ingest keys. What each row may do follows the plan's state (draft, committed, closed) and the
caller's team role; the rows are written by campaigns/admin/inline_writes.py."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest

from campaigns.admin.forms import (
    ITEM_FIELDS,
    OBSERVED_FIELDS,
    OTHER_WORK_FIELDS,
    ROW_WORK_FIELDS,
    STAGE_FIELDS,
    DecisionForm,
    ItemWorkForm,
    LotForm,
    PlannedItemForm,
    StageForm,
    StopRuleForm,
)
from campaigns.admin.tenancy import WRITERS, caller_has_role, choices_once, object_id_of
from campaigns.models import (
    Campaign,
    DecisionPoint,
    IngestKey,
    LotReservation,
    PlannedItem,
    Stage,
    StopRule,
)


class CampaignInline(admin.TabularInline[Any, Any]):
    # One empty row to type into; "Add another" for more. Unchanged rows are not saved.
    extra = 1
    # The plan's rows are written while drafting and frozen with the plan at commit.
    frozen_after_commit = True

    def _writable(self, request: HttpRequest, obj: Campaign | None) -> bool:
        if obj is None:
            return True
        if obj.is_closed or (self.frozen_after_commit and not obj.is_draft):
            return False
        return caller_has_role(request, obj.team_id, WRITERS)

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return True

    def formfield_for_foreignkey(self, db_field: Any, request: HttpRequest, **kwargs: Any) -> Any:
        return choices_once(super().formfield_for_foreignkey(db_field, request, **kwargs))

    def formfield_for_manytomany(self, db_field: Any, request: HttpRequest, **kwargs: Any) -> Any:
        return choices_once(super().formfield_for_manytomany(db_field, request, **kwargs))

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return self._writable(request, obj)

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return self._writable(request, obj)

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return self._writable(request, obj) and (obj is None or obj.is_draft)


class PlannedItemInline(CampaignInline):
    model = PlannedItem
    form = PlannedItemForm
    fields = [*ITEM_FIELDS, *ROW_WORK_FIELDS, "status", "amendment_reason"]
    readonly_fields = ["status"]
    # After commit an item may still be added or amended, with a reason.
    frozen_after_commit = False

    def get_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        if obj is None or obj.is_draft:
            return [f for f in self.fields if f != "amendment_reason"]
        return self.fields


class ItemWorkInline(CampaignInline):
    """The same items as PlannedItemInline, with the work the forecast turns into hours."""

    model = PlannedItem
    form = ItemWorkForm
    fields = ["name", *OTHER_WORK_FIELDS, "estimate_spec", "amendment_reason"]
    readonly_fields = ["name"]
    verbose_name = "item's work (forecast inputs)"
    verbose_name_plural = "Items' work (forecast inputs beside tokens and samples)"
    classes = ["collapse"]  # tokens and samples, what a pilot rescales, are in the item's row
    extra = 0
    can_delete = False
    frozen_after_commit = False

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False  # items are added in the table above

    def get_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        if obj is None or obj.is_draft:
            return [f for f in self.fields if f != "amendment_reason"]
        return self.fields


class StopRuleInline(CampaignInline):
    model = StopRule
    form = StopRuleForm
    fields = [
        "kind",
        "metric",
        "comparator",
        "threshold",
        "description",
        "grace_steps",
        "grace_minutes",
    ]


class StageInline(CampaignInline):
    model = Stage
    form = StageForm
    fields = [*STAGE_FIELDS[:5], "item_name", *STAGE_FIELDS[5:7], "after", *STAGE_FIELDS[7:]]
    # After commit only what was observed stays editable (see get_readonly_fields).
    frozen_after_commit = False

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return super().has_add_permission(request, obj) and (obj is None or obj.is_draft)

    def get_queryset(self, request: HttpRequest) -> QuerySet[Any]:
        # Each row shows its dependencies: one query for all rows, not one per row.
        return super().get_queryset(request).prefetch_related("depends_on")

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> list[str]:
        if obj is not None and not obj.is_draft:
            # The plan is frozen: only what was observed stays editable.
            return [str(f) for f in STAGE_FIELDS if f not in OBSERVED_FIELDS]
        return []

    def get_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        if obj is not None and not obj.is_draft:
            return STAGE_FIELDS  # names are for planning; the frozen plan shows its links
        return self.fields

    def formfield_for_foreignkey(self, db_field: Any, request: HttpRequest, **kwargs: Any) -> Any:
        if db_field.name == "variant":
            kwargs["queryset"] = PlannedItem.objects.filter(campaign_id=object_id_of(request))
        return super().formfield_for_foreignkey(db_field, request, **kwargs)

    def formfield_for_manytomany(self, db_field: Any, request: HttpRequest, **kwargs: Any) -> Any:
        if db_field.name == "depends_on":
            kwargs["queryset"] = Stage.objects.filter(campaign_id=object_id_of(request))
            # One line tall (ctrl/cmd-click for several): a stage row stays one row.
            kwargs["widget"] = forms.SelectMultiple(
                attrs={"size": 1, "class": "compact-multi", "title": "ctrl/cmd-click for several"}
            )
        return super().formfield_for_manytomany(db_field, request, **kwargs)


class DecisionPointInline(CampaignInline):
    model = DecisionPoint
    form = DecisionForm
    fields = ["label", "outcome", "rationale", "cut_variants", "decided_by", "decided_at"]
    readonly_fields = ["decided_by", "decided_at"]
    # Decisions come after commit (after the pilot); they are records, never deleted.
    frozen_after_commit = False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def formfield_for_manytomany(self, db_field: Any, request: HttpRequest, **kwargs: Any) -> Any:
        if db_field.name == "cut_variants":
            kwargs["queryset"] = PlannedItem.objects.filter(
                campaign_id=object_id_of(request)
            ).exclude(tier="mandatory")
            kwargs["widget"] = forms.SelectMultiple(
                attrs={"size": 1, "class": "compact-multi", "title": "ctrl/cmd-click for several"}
            )
        return super().formfield_for_manytomany(db_field, request, **kwargs)


class LotReservationInline(CampaignInline):
    model = LotReservation
    form = LotForm
    fields = ["plan", "quantity", "start"]


class IngestKeyInline(CampaignInline):
    model = IngestKey
    fields = ["name", "prefix", "created_by", "created_at", "revoked_at"]
    readonly_fields = ["name", "prefix", "created_by", "created_at", "revoked_at"]
    verbose_name = "ingest key"
    can_delete = False

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False  # keys are issued by the action, which shows the secret once

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False
