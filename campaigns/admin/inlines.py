"""The campaign page's inline tables: items, their work, stop rules, stages, decisions, lots and
ingest keys. What each row may do follows the plan's state (draft, committed, closed) and the
caller's team role; the rows are written by campaigns/admin/inline_writes.py."""

from __future__ import annotations

import copy
from typing import Any

from django import forms
from django.contrib import admin
from django.core.exceptions import ValidationError
from django.db.models import QuerySet
from django.forms.models import BaseInlineFormSet
from django.http import HttpRequest
from django.utils.functional import cached_property

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
from campaigns.admin.shared_choices import SharedChoicesSelect, SharedChoicesSelectMultiple
from campaigns.admin.tenancy import (
    WRITERS,
    ChoiceOfTheList,
    ChoicesOfTheList,
    caller_has_role,
    choices_once,
    object_id_of,
)
from campaigns.domain.formatting import format_hours
from campaigns.domain.observed_hours import RECORDED_OVER_RUNS, Reconciled
from campaigns.models import (
    Campaign,
    DecisionPoint,
    IngestKey,
    LotReservation,
    PlannedItem,
    Stage,
    StopRule,
)
from campaigns.models.field_lists import STOP_RULE_FIELDS
from campaigns.selectors.observed_hours import reconciled

# The tables that grow with the plan show this many rows a page (issue 21: 200 items once
# rendered 600 rows, 17 s and several MB; each row costs a form and a dozen widgets to
# render); ``?page=N`` shows rows (N-1)·25+1 to N·25 of each.
ROWS_PER_PAGE = 25
# Where a request keeps the inlines' formset classes (CampaignInline.get_formset).
_FORMSETS = "_campaign_desk_formsets"


def rows_page(request: HttpRequest) -> int:
    """The page of rows asked for (1 when absent or not a positive number)."""
    try:
        return max(1, int(request.GET.get("page", "1")))
    except ValueError:
        return 1


def compact_multi(name: str) -> SharedChoicesSelectMultiple:
    """A multiple choice one line tall (ctrl/cmd-click for several), so its row stays one row;
    its choices come once in the page (campaigns/admin/shared_choices.py)."""
    return SharedChoicesSelectMultiple(
        name, attrs={"size": 1, "class": "compact-multi", "title": "ctrl/cmd-click for several"}
    )


class _KnownRow(forms.ModelChoiceField):  # type: ignore[type-arg]
    """A posted row's hidden id, found among the rows its formset has read: Django's own field
    looks every posted id up again, one query per row and table on each post. An id the
    formset did not read is looked up as before."""

    def __init__(self, known: dict[Any, Any], pk: Any, like: forms.ModelChoiceField) -> None:  # type: ignore[type-arg]
        super().__init__(like.queryset, initial=like.initial, required=False, widget=like.widget)
        self.known, self.pk = known, pk

    def to_python(self, value: Any) -> Any:
        if isinstance(value, str) and value not in self.empty_values:
            try:
                row = self.known.get(self.pk.to_python(value))
            except ValidationError:
                row = None
            if row is not None:
                # A copy, as a fresh read would be: the form changes its own instance.
                return copy.copy(row)
        return super().to_python(value)


class PageRowsFormSet(BaseInlineFormSet):  # type: ignore[type-arg]
    """The inlines' formset: a posted row's id is checked against the rows already read, and
    the blank row's form made once."""

    @cached_property
    def empty_form(self) -> Any:
        # Django makes a new one each time the admin reads it: the table's headers, its
        # "add another" row, its media, about four forms a table.
        return super().empty_form

    def add_fields(self, form: Any, index: Any) -> None:
        super().add_fields(form, index)
        pk = self.model._meta.pk
        field = form.fields.get(pk.name)
        if form.is_bound and type(field) is forms.ModelChoiceField:
            if not hasattr(self, "_known_rows"):
                self._known_rows = {row.pk: row for row in self.get_queryset()}
            form.fields[pk.name] = _KnownRow(self._known_rows, pk, field)


class CampaignInline(admin.TabularInline[Any, Any]):
    formset = PageRowsFormSet
    # One empty row to type into; "Add another" for more. Unchanged rows are not saved.
    extra = 1
    # The plan's rows are written while drafting and frozen with the plan at commit.
    frozen_after_commit = True
    # The rows of a table that grows with the plan come a page at a time (ROWS_PER_PAGE).
    paged = False

    def get_queryset(self, request: HttpRequest) -> QuerySet[Any]:
        rows = super().get_queryset(request)
        if not self.paged:
            return rows
        start = (rows_page(request) - 1) * ROWS_PER_PAGE
        # The page's ids as a subquery (a sliced queryset cannot be filtered by the formset);
        # a POST carries the same ?page, so it validates the rows its page showed.
        page = (
            rows.filter(campaign_id=object_id_of(request))
            .order_by("id")
            .values("id")[start : start + ROWS_PER_PAGE]
        )
        return rows.filter(pk__in=page)

    def get_formset(self, request: HttpRequest, obj: Any = None, **kwargs: Any) -> Any:
        """The inline's formset class, built once per request and campaign: the change view
        asks again when a service's refusal re-renders the page (campaigns/admin/refusals.py),
        and each build makes the form class and its fields anew, reading every choice list
        (``choices_once``). Whatever the class depends on (the campaign's state, the caller's
        role, the page of rows) holds for the whole request."""
        if kwargs:
            return super().get_formset(request, obj, **kwargs)
        built: dict[tuple[type[Any], Any], Any] | None = getattr(request, _FORMSETS, None)
        if built is None:
            built = {}
            setattr(request, _FORMSETS, built)
        key = (type(self), getattr(obj, "pk", None))
        if key not in built:
            built[key] = super().get_formset(request, obj)
        return built[key]

    def _writable(self, request: HttpRequest, obj: Campaign | None) -> bool:
        if obj is None:
            return True
        if obj.is_closed or (self.frozen_after_commit and not obj.is_draft):
            return False
        return caller_has_role(request, obj.team_id, WRITERS)

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return True

    def formfield_for_foreignkey(self, db_field: Any, request: HttpRequest, **kwargs: Any) -> Any:
        # Django narrows a limit_choices_to field's queryset after this, past the list read here.
        if not db_field.remote_field.limit_choices_to:
            kwargs.setdefault("form_class", ChoiceOfTheList)
        return choices_once(super().formfield_for_foreignkey(db_field, request, **kwargs))

    def formfield_for_manytomany(self, db_field: Any, request: HttpRequest, **kwargs: Any) -> Any:
        if not db_field.remote_field.limit_choices_to:
            kwargs.setdefault("form_class", ChoicesOfTheList)
        return choices_once(super().formfield_for_manytomany(db_field, request, **kwargs))

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return self._writable(request, obj)

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return self._writable(request, obj)

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return self._writable(request, obj) and (obj is None or obj.is_draft)


class ItemRowsInline(CampaignInline):
    """The items' tables: after commit an item may still be added or amended, with a reason;
    while drafting there is nothing to amend, so no reason column."""

    frozen_after_commit = False
    paged = True

    def get_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        if obj is None or obj.is_draft:
            return [f for f in self.fields or () if f != "amendment_reason"]
        return self.fields


class PlannedItemInline(ItemRowsInline):
    model = PlannedItem
    form = PlannedItemForm
    fields = [*ITEM_FIELDS, *ROW_WORK_FIELDS, "status", "amendment_reason"]
    readonly_fields = ["status"]


class ItemWorkInline(ItemRowsInline):
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

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False  # items are added in the table above


class StopRuleInline(CampaignInline):
    model = StopRule
    form = StopRuleForm
    fields = list(STOP_RULE_FIELDS)


class StageInline(CampaignInline):
    model = Stage
    form = StageForm
    # While drafting nothing is observed yet: no reason column (the row must fit 1366 px).
    fields = [*STAGE_FIELDS[:5], "item_name", *STAGE_FIELDS[5:7], "after", *STAGE_FIELDS[7:9]]
    # After commit only what was observed stays editable (see get_readonly_fields).
    frozen_after_commit = False
    paged = True

    @admin.display(description="observed by runs")
    def runs_observed(self, stage: Stage) -> str:
        """The runs' figure beside the typed one (docs/domain.md §8.6), reconciled once per
        page (an inline instance lives for one request)."""
        if stage.pk is None:
            return "—"
        cache: dict[int, Reconciled] = self.__dict__.setdefault("_observed", {})
        if stage.campaign_id not in cache:
            cache[stage.campaign_id] = reconciled(stage.campaign)
        seen = cache[stage.campaign_id].stages.get(stage.pk)
        if seen is None or seen.runs_hours is None:
            return "no run: type it"
        text = f"{format_hours(seen.runs_hours)} h ({seen.runs} run{'s' if seen.runs != 1 else ''})"
        if seen.source == RECORDED_OVER_RUNS:
            return f"{text}; typed {format_hours(seen.typed_hours or 0)} h stands"
        return text

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return super().has_add_permission(request, obj) and (obj is None or obj.is_draft)

    def get_queryset(self, request: HttpRequest) -> QuerySet[Any]:
        # Each row shows its item and its dependencies (read-only once committed): one query
        # for all rows, not one per row.
        rows = super().get_queryset(request)
        return rows.select_related("variant").prefetch_related("depends_on")

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> list[str]:
        if obj is not None and not obj.is_draft:
            # The plan is frozen: only what was observed stays editable.
            return [*(str(f) for f in STAGE_FIELDS if f not in OBSERVED_FIELDS), "runs_observed"]
        return []

    def get_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        if obj is not None and not obj.is_draft:
            # Names are for planning; the frozen plan shows its links, and the runs' hours
            # beside what may be typed.
            return [*STAGE_FIELDS[:7], "runs_observed", *STAGE_FIELDS[7:]]
        return self.fields

    def formfield_for_foreignkey(self, db_field: Any, request: HttpRequest, **kwargs: Any) -> Any:
        if db_field.name == "variant":
            kwargs["queryset"] = PlannedItem.objects.filter(campaign_id=object_id_of(request))
            # Every item once in the page, not on every row (campaigns/admin/shared_choices.py).
            kwargs["widget"] = SharedChoicesSelect("stage-variant")
        return super().formfield_for_foreignkey(db_field, request, **kwargs)

    def formfield_for_manytomany(self, db_field: Any, request: HttpRequest, **kwargs: Any) -> Any:
        if db_field.name == "depends_on":
            kwargs["queryset"] = Stage.objects.filter(campaign_id=object_id_of(request))
            # Every stage once in the page, not on every row (campaigns/admin/shared_choices.py).
            kwargs["widget"] = compact_multi("stage-depends_on")
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
            kwargs["widget"] = compact_multi("decision-cut_variants")
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
