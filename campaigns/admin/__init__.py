"""The admin is where people plan a campaign: one change page holds the whole plan.

Permissions come from team roles, not from Django's per-model permissions: members see their
teams' campaigns (another team's campaign answers 404), planners and owners change them, viewers
only read; superusers see all.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import ValidationError
from django.db.models import Count, Q, QuerySet, URLField
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.html import format_html, format_html_join
from django.utils.safestring import mark_safe

from campaigns import services
from campaigns.charts.curves import PALETTE, Overlaid, overlay_svg
from campaigns.charts.curves import curve_svg as curves_svg
from campaigns.charts.gantt import GanttLot, GanttStage, gantt_svg
from campaigns.models import (
    AMENDABLE_ITEM_FIELDS,
    WORK_FIELDS,
    Campaign,
    CampaignClosed,
    CommitRefused,
    DecisionPoint,
    IngestKey,
    LotReservation,
    Membership,
    Outcome,
    PlanBaseline,
    PlanFrozen,
    PlannedItem,
    Role,
    Run,
    RunsStillRunning,
    Stage,
    StopRule,
    Team,
    team_ids_for,
)
from campaigns.selectors import run_metrics as readings
from campaigns.selectors.plan_summary import campaign_summary, commit_warnings, fmt_hours


def _per_request(request: HttpRequest) -> dict[Any, Any]:
    """Answers cached for one request: the admin asks the same role question for every inline
    row, and one page must not cost a query per row (bench/campaign_page)."""
    cache: dict[Any, Any] | None = getattr(request, "_campaign_desk_roles", None)
    if cache is None:
        cache = {}
        request._campaign_desk_roles = cache  # type: ignore[attr-defined]
    return cache


def _team_ids(request: HttpRequest, *, write: bool = False) -> list[int]:
    cache = _per_request(request)
    key = ("teams", write)
    if key not in cache:
        cache[key] = team_ids_for(request.user, write=write)
    return list(cache[key])


def _role_in(request: HttpRequest, team_id: int | None, roles: set[str]) -> bool:
    cache = _per_request(request)
    key = ("role", team_id, frozenset(roles))
    if key not in cache:
        cache[key] = Membership.objects.has_role(request.user, team_id, roles)
    return bool(cache[key])


def _choices_once(field: Any) -> Any:
    """Evaluate a choice field's queryset once for the whole formset: Django re-runs it for
    every inline row otherwise (a query per row). Validation still uses the queryset."""
    if field is None or not hasattr(field, "queryset"):
        return field
    choices = list(field.choices)
    field.choices = choices
    inner = getattr(field.widget, "widget", None)  # the admin's related-object wrapper
    if inner is not None:
        inner.choices = choices
    return field


WRITERS: set[str] = {Role.PLANNER, Role.OWNER}
OWNERS: set[str] = {Role.OWNER}
READERS: set[str] = {Role.VIEWER, Role.PLANNER, Role.OWNER}


def _object_id(request: HttpRequest) -> int:
    """The campaign being edited, to limit an inline's choices to its own rows."""
    match = request.resolver_match
    try:
        return int(match.kwargs.get("object_id", 0)) if match else 0
    except ValueError:
        return 0


class NotFoundOutsideTeams:
    """Django's admin redirects to the index for an object it cannot find; another team's
    object must look exactly like one that does not exist: 404."""

    def change_view(
        self,
        request: HttpRequest,
        object_id: str,
        form_url: str = "",
        extra_context: dict[str, Any] | None = None,
    ) -> HttpResponse:
        if self.get_object(request, object_id) is None:  # type: ignore[attr-defined]
            raise Http404("No such object.")
        return super().change_view(request, object_id, form_url, extra_context)  # type: ignore[misc,no-any-return]


class TeamScopedAdmin(NotFoundOutsideTeams, admin.ModelAdmin[Any]):
    """Scope a model to the caller's teams through `team_path` (e.g. 'campaign__team')."""

    team_path = "team"

    def get_queryset(self, request: HttpRequest) -> QuerySet[Any]:
        qs = super().get_queryset(request)
        if request.user.is_superuser:
            return qs
        return qs.filter(**{f"{self.team_path}__in": _team_ids(request)})

    def team_id_of(self, obj: Any) -> int | None:
        for part in self.team_path.split("__"):
            obj = getattr(obj, part, None)
            if obj is None:
                return None
        return int(obj.pk)

    def has_module_permission(self, request: HttpRequest) -> bool:
        return request.user.is_active and (request.user.is_superuser or bool(_team_ids(request)))

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        if obj is None:
            return self.has_module_permission(request)
        return _role_in(request, self.team_id_of(obj), READERS)

    def has_add_permission(self, request: HttpRequest, *args: Any) -> bool:
        return request.user.is_superuser or bool(_team_ids(request, write=True))

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        if obj is None:
            return request.user.is_superuser or bool(_team_ids(request, write=True))
        return _role_in(request, self.team_id_of(obj), WRITERS)

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


# --- Inlines -------------------------------------------------------------------------------


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
        return _role_in(request, obj.team_id, WRITERS)

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return True

    def formfield_for_foreignkey(self, db_field: Any, request: HttpRequest, **kwargs: Any) -> Any:
        return _choices_once(super().formfield_for_foreignkey(db_field, request, **kwargs))

    def formfield_for_manytomany(self, db_field: Any, request: HttpRequest, **kwargs: Any) -> Any:
        return _choices_once(super().formfield_for_manytomany(db_field, request, **kwargs))

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return self._writable(request, obj)

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return self._writable(request, obj)

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return self._writable(request, obj) and (obj is None or obj.is_draft)


def _refusal_to_form(form: forms.BaseForm, exc: Exception, field: str | None = None) -> None:
    """A service's refusal shown on the form: field errors beside their fields, a state
    refusal (frozen plan, closed campaign) at the top of the form."""
    if isinstance(exc, ValidationError) and hasattr(exc, "error_dict"):
        for name, errors in exc.error_dict.items():
            target = name if name in form.fields else None
            for error in errors:
                form.add_error(target, error)
        return
    form.add_error(field, str(exc))


def _campaign_of(form: forms.ModelForm[Any]) -> Campaign | None:
    campaign = getattr(form, "parent_campaign", None)
    if campaign is None and form.instance.pk:
        campaign = form.instance.campaign
    return campaign


class CampaignChildForm(forms.ModelForm[Any]):
    """An inline row's form; the inline hands it the campaign being edited."""

    parent_campaign: Campaign | None = None


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
    amendment_reason = forms.CharField(
        required=False,
        widget=forms.TextInput(attrs={"size": 16}),
        help_text="After commit: why this item is added or changes (recorded as an amendment).",
    )

    class Meta:
        model = PlannedItem
        fields = ITEM_FIELDS
        widgets = {
            "name": forms.TextInput(attrs={"size": 14}),
            "rationale": forms.Textarea(attrs={"rows": 1, "cols": 16}),
            "config": forms.Textarea(attrs={"rows": 1, "cols": 16}),
        }

    def changes(self) -> dict[str, Any]:
        """The posted fields that differ from what is stored (all of them for a new item)."""
        data = self.cleaned_data
        if not self.instance.pk:
            return {f: data[f] for f in ITEM_FIELDS if f in data}
        stored = PlannedItem.objects.get(pk=self.instance.pk)
        return {
            f: data[f] for f in AMENDABLE_ITEM_FIELDS if f in data and data[f] != getattr(stored, f)
        }

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        campaign = _campaign_of(self)
        if campaign is None or self.errors or not self.has_changed():
            return data
        try:
            services.check_item(
                campaign=campaign,
                item=self.instance if self.instance.pk else None,
                changes=self.changes(),
                amendment_reason=data.get("amendment_reason") or "",
            )
        except (ValidationError, PlanFrozen, CampaignClosed) as exc:
            _refusal_to_form(self, exc)
        return data

    def _post_clean(self) -> None:
        # Uniqueness and amendments are the service's rules (clean() above); the model's own
        # validation would need the campaign, which a new inline row does not have yet.
        pass


class PlannedItemInline(CampaignInline):
    model = PlannedItem
    form = PlannedItemForm
    fields = [*ITEM_FIELDS, "status", "amendment_reason"]
    readonly_fields = ["status"]
    # After commit an item may still be added or amended, with a reason.
    frozen_after_commit = False

    def get_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        if obj is None or obj.is_draft:
            return [f for f in self.fields if f != "amendment_reason"]
        return self.fields


class ItemWorkForm(PlannedItemForm):
    """The forecast's inputs of an item (docs/domain.md §10), edited in their own table."""

    class Meta:
        model = PlannedItem
        fields = list(WORK_FIELDS)
        widgets = {
            f: forms.NumberInput(attrs={"style": "width:7em", "step": "any"}) for f in WORK_FIELDS
        }

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # The model's ranges (positive, finite) checked on the form: this form skips the
        # model's own validation (PlannedItemForm._post_clean).
        for name in WORK_FIELDS:
            field = self.fields[name]
            field.validators = [
                *field.validators,
                *getattr(PlannedItem._meta.get_field(name), "validators", []),
            ]


class ItemWorkInline(CampaignInline):
    """The same items as PlannedItemInline, with the work the forecast turns into hours."""

    model = PlannedItem
    form = ItemWorkForm
    fields = ["name", *WORK_FIELDS, "amendment_reason"]
    readonly_fields = ["name"]
    verbose_name = "item's work (forecast inputs)"
    verbose_name_plural = "Items' work (forecast inputs: the pilot rescales these)"
    classes = ["collapse"]
    extra = 0
    can_delete = False
    frozen_after_commit = False

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False  # items are added in the table above

    def get_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        if obj is None or obj.is_draft:
            return [f for f in self.fields if f != "amendment_reason"]
        return self.fields


class StopRuleForm(CampaignChildForm):
    class Meta:
        model = StopRule
        fields = ["kind", "metric", "comparator", "threshold", "description"]
        widgets = {"description": forms.Textarea(attrs={"rows": 1, "cols": 24})}


class StopRuleInline(CampaignInline):
    model = StopRule
    form = StopRuleForm
    fields = ["kind", "metric", "comparator", "threshold", "description"]


STAGE_FIELDS = [
    "name",
    "kind",
    "machine",
    "resource",
    "variant",
    "planned_hours",
    "depends_on",
    "observed_hours",
    "deviation_note",
]
OBSERVED_FIELDS = {"observed_hours", "deviation_note"}


class StageForm(CampaignChildForm):
    class Meta:
        model = Stage
        fields = STAGE_FIELDS

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        observed = data.get("observed_hours")
        if "observed_hours" not in self.changed_data or observed is None:
            return data
        campaign = _campaign_of(self)
        if campaign is None or not self.instance.pk:
            self.add_error(
                "observed_hours",
                "Observed hours are compared with the frozen plan: commit the plan first.",
            )
            return data
        try:
            services.check_observed_hours(
                stage=self.instance,
                observed_hours=observed,
                deviation_note=data.get("deviation_note") or "",
            )
        except PlanFrozen:
            self.add_error(
                "observed_hours",
                "Observed hours are compared with the frozen plan: commit the plan first.",
            )
        except (ValidationError, CampaignClosed) as exc:
            _refusal_to_form(self, exc)
        return data


class StageInline(CampaignInline):
    model = Stage
    form = StageForm
    fields = STAGE_FIELDS  # type: ignore[assignment]
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
            return [str(f) for f in self.fields if f not in OBSERVED_FIELDS]
        return []

    def formfield_for_foreignkey(self, db_field: Any, request: HttpRequest, **kwargs: Any) -> Any:
        if db_field.name == "variant":
            kwargs["queryset"] = PlannedItem.objects.filter(campaign_id=_object_id(request))
        return super().formfield_for_foreignkey(db_field, request, **kwargs)

    def formfield_for_manytomany(self, db_field: Any, request: HttpRequest, **kwargs: Any) -> Any:
        if db_field.name == "depends_on":
            kwargs["queryset"] = Stage.objects.filter(campaign_id=_object_id(request))
            # One line tall (ctrl/cmd-click for several): a stage row stays one row.
            kwargs["widget"] = forms.SelectMultiple(
                attrs={"size": 1, "class": "compact-multi", "title": "ctrl/cmd-click for several"}
            )
        return super().formfield_for_manytomany(db_field, request, **kwargs)


class DecisionForm(CampaignChildForm):
    class Meta:
        model = DecisionPoint
        fields = ["label", "outcome", "rationale", "cut_variants"]

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        campaign = _campaign_of(self)
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
            services.check_decision(
                campaign=campaign,
                outcome=data["outcome"],
                rationale=data.get("rationale") or "",
                cut_variants=list(data.get("cut_variants") or []),
            )
        except (ValidationError, CampaignClosed) as exc:
            _refusal_to_form(self, exc)
        return data

    def _post_clean(self) -> None:
        pass  # the decision's rules are the service's (clean() above)


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
                campaign_id=_object_id(request)
            ).exclude(tier="mandatory")
            kwargs["widget"] = forms.SelectMultiple(
                attrs={"size": 1, "class": "compact-multi", "title": "ctrl/cmd-click for several"}
            )
        return super().formfield_for_manytomany(db_field, request, **kwargs)


class LotForm(CampaignChildForm):
    class Meta:
        model = LotReservation
        fields = ["plan", "quantity", "start"]


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


def _save_item(campaign: Campaign, form: Any, user: Any) -> None:
    reason = form.cleaned_data.get("amendment_reason") or ""
    if form.instance.pk is None:
        services.create_item(
            campaign=campaign, user=user, amendment_reason=reason, **form.changes()
        )
    else:
        services.amend_item(item=form.instance, user=user, reason=reason, **form.changes())


def _row_saver(add: Any, change: Any, param: str, fields: list[str]) -> Any:
    """Save an inline row through the service that adds such a row, or the one that changes it."""

    def save(campaign: Campaign, form: Any, user: Any) -> None:
        values = {f: form.cleaned_data.get(f) for f in fields}
        if form.instance.pk is None:
            add(campaign=campaign, user=user, **values)
        else:
            stored = type(form.instance).objects.get(pk=form.instance.pk)
            change(**{param: stored}, user=user, **values)

    return save


_save_stop_rule = _row_saver(
    services.add_stop_rule, services.change_stop_rule, "rule", StopRuleForm.Meta.fields
)
_save_lot = _row_saver(services.reserve_lot, services.change_lot, "lot", LotForm.Meta.fields)


def _save_stage(campaign: Campaign, form: Any, user: Any) -> None:
    data = form.cleaned_data
    if form.instance.pk is not None and not campaign.is_draft:
        if OBSERVED_FIELDS & set(form.changed_data) and data.get("observed_hours") is not None:
            services.record_observed_hours(
                stage=form.instance,
                user=user,
                observed_hours=data["observed_hours"],
                deviation_note=data.get("deviation_note") or "",
            )
        return
    fields = {f: data.get(f) for f in STAGE_FIELDS if f not in OBSERVED_FIELDS | {"depends_on"}}
    depends_on = list(data.get("depends_on") or [])
    if form.instance.pk is None:
        services.add_stage(campaign=campaign, user=user, depends_on=depends_on, **fields)
    else:
        services.change_stage(
            stage=Stage.objects.get(pk=form.instance.pk),
            user=user,
            depends_on=depends_on,
            **fields,
        )


def _save_decision(campaign: Campaign, form: Any, user: Any) -> None:
    data = form.cleaned_data
    if data.get("outcome", Outcome.PENDING) == Outcome.PENDING:
        if form.instance.pk is None:
            services.plan_decision_point(campaign=campaign, user=user, label=data.get("label"))
        return
    services.record_decision(
        campaign=campaign,
        user=user,
        outcome=data["outcome"],
        rationale=data.get("rationale") or "",
        cut_variants=list(data.get("cut_variants") or []),
        label=form.instance.label if form.instance.pk else data.get("label") or "",
    )


# Which service writes each inline's rows, and which removes one.
INLINE_WRITERS: dict[type[Any], tuple[Any, Any]] = {
    PlannedItem: (_save_item, lambda obj, user: services.remove_item(item=obj, user=user)),
    StopRule: (_save_stop_rule, lambda obj, user: services.remove_stop_rule(rule=obj, user=user)),
    Stage: (_save_stage, lambda obj, user: services.remove_stage(stage=obj, user=user)),
    DecisionPoint: (_save_decision, None),
    LotReservation: (_save_lot, lambda obj, user: services.release_lot(lot=obj, user=user)),
}


# --- Campaign ------------------------------------------------------------------------------


CAMPAIGN_FIELDS = [
    "team",
    "title",
    "question",
    "corpus_name",
    "corpus_revision",
    "expected_deliverables",
    "decision_threshold",
    "window_hours",
    "budget",
    "currency",
    "hourly_rate_per_gpu",
    "required_checkpoint_components",
]


class CampaignForm(forms.ModelForm[Campaign]):
    class Meta:
        model = Campaign
        fields = CAMPAIGN_FIELDS
        widgets = {
            "question": forms.Textarea(attrs={"rows": 2}),
            "expected_deliverables": forms.Textarea(attrs={"rows": 2}),
        }

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if self.instance.pk and self.changed_data:
            try:
                services.check_campaign_change(self.instance, self.changed_data)
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


@admin.register(Campaign)
class CampaignAdmin(TeamScopedAdmin):
    form = CampaignForm
    change_form_template = "admin/campaigns/campaign/change_form.html"
    list_display = [
        "title",
        "team",
        "status",
        "corpus_name",
        "window_hours",
        "mandatory_items",
        "committed_at",
    ]
    # Only the caller's teams are offered (the queryset is already scoped to them).
    list_filter = ["status", ("team", admin.RelatedOnlyFieldListFilter), "items__tier"]
    search_fields = ["title", "question", "corpus_name", "corpus_revision"]
    inlines = [
        PlannedItemInline,
        ItemWorkInline,
        StopRuleInline,
        StageInline,
        DecisionPointInline,
        LotReservationInline,
        IngestKeyInline,
    ]
    actions = [
        "commit_selected",
        "issue_ingest_key",
        "revoke_ingest_keys",
    ]

    def get_queryset(self, request: HttpRequest) -> QuerySet[Any]:
        qs = super().get_queryset(request)
        annotated: QuerySet[Any] = qs.select_related("team").annotate(
            _mandatory=Count("items", filter=Q(items__tier="mandatory"), distinct=True)
        )
        return annotated

    @admin.display(description="mandatory items", ordering="_mandatory")
    def mandatory_items(self, obj: Any) -> int:
        return int(getattr(obj, "_mandatory", 0))

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> list[str]:
        ro = ["status", "conclusion", "committed_at", "committed_by", "closed_at", "closed_by"]
        if obj is not None and not obj.is_draft:
            # The question, corpus and window are part of the frozen plan.
            ro += [f for f in CAMPAIGN_FIELDS if f not in services.EDITABLE_AFTER_COMMIT]
        if obj is not None and obj.is_closed:
            ro += list(services.EDITABLE_AFTER_COMMIT)
        return ro

    def get_fieldsets(self, request: HttpRequest, obj: Any = None) -> Any:
        # Short fields share a line; the outcome stays folded until there is one.
        return [
            (None, {"fields": [("team", "title", "status"), "question", "decision_threshold"]}),
            (
                "Corpus and deliverables",
                {"fields": [("corpus_name", "corpus_revision"), "expected_deliverables"]},
            ),
            (
                "Window and budget",
                {
                    "fields": [
                        ("window_hours", "budget", "currency", "hourly_rate_per_gpu"),
                        "required_checkpoint_components",
                    ]
                },
            ),
            (
                "Outcome",
                {
                    "fields": [
                        "conclusion",
                        ("committed_at", "committed_by"),
                        ("closed_at", "closed_by"),
                    ],
                    "classes": [] if obj is not None and obj.is_closed else ["collapse"],
                },
            ),
        ]

    def get_changeform_initial_data(self, request: HttpRequest) -> dict[str, Any]:
        initial: dict[str, Any] = dict(super().get_changeform_initial_data(request))
        writable = _team_ids(request, write=True)
        if "team" not in initial and len(writable) == 1:
            initial["team"] = next(iter(writable))  # the user's one team, preselected
        return initial

    def render_change_form(
        self,
        request: HttpRequest,
        context: dict[str, Any],
        add: bool = False,
        change: bool = False,
        form_url: str = "",
        obj: Any = None,
    ) -> Any:
        # The plan's tables need the width: no app list beside them (breadcrumbs lead back).
        context["is_nav_sidebar_enabled"] = False
        context["error_links"] = _error_links(
            context.get("adminform"), context.get("inline_admin_formsets") or []
        )
        return super().render_change_form(request, context, add, change, form_url, obj)

    def formfield_for_foreignkey(self, db_field: Any, request: HttpRequest, **kwargs: Any) -> Any:
        if db_field.name == "team" and not request.user.is_superuser:
            kwargs["queryset"] = Team.objects.filter(pk__in=_team_ids(request, write=True))
        return super().formfield_for_foreignkey(db_field, request, **kwargs)

    def get_formsets_with_inlines(self, request: HttpRequest, obj: Any = None) -> Any:
        for formset, inline in super().get_formsets_with_inlines(request, obj):
            form = formset.form
            if isinstance(form, type) and issubclass(form, CampaignChildForm):
                formset.form = type(form.__name__, (form,), {"parent_campaign": obj})
            yield formset, inline

    def save_model(self, request: HttpRequest, obj: Any, form: Any, change: bool) -> None:
        data = {f: form.cleaned_data[f] for f in CAMPAIGN_FIELDS if f in form.cleaned_data}
        if not change:
            created = services.create_campaign(user=request.user, **data)
            obj.pk, obj._state = created.pk, created._state
            obj.refresh_from_db()
            return
        changes = {f: data[f] for f in form.changed_data if f in data}
        if changes:
            services.update_campaign(campaign=obj, user=request.user, **changes)

    def save_related(self, request: HttpRequest, form: Any, formsets: Any, change: bool) -> None:
        form.instance.refresh_from_db()
        for formset in formsets:
            self.save_formset(request, form, formset, change=change)

    def save_formset(self, request: HttpRequest, form: Any, formset: Any, change: bool) -> None:
        writers = INLINE_WRITERS.get(formset.model)
        # The admin's change message reads these; the services' writes are the record.
        formset.new_objects, formset.changed_objects, formset.deleted_objects = [], [], []
        if writers is None:
            return  # read-only inlines (ingest keys)
        save, remove = writers
        campaign = form.instance
        for row in formset.deleted_forms:
            if row.instance.pk is not None and remove is not None:
                remove(row.instance, request.user)
        for row in formset.forms:
            if row in formset.deleted_forms or not row.has_changed():
                continue
            save(campaign, row, request.user)

    def change_view(
        self,
        request: HttpRequest,
        object_id: str,
        form_url: str = "",
        extra_context: dict[str, Any] | None = None,
    ) -> HttpResponse:
        campaign = self.get_object(request, object_id)
        if campaign is None:
            raise Http404("No such campaign.")
        extra_context = dict(extra_context or {})
        summary = campaign_summary(campaign)
        extra_context["summary"] = summary
        if summary.schedule is not None:
            critical = set(summary.schedule.critical_path)
            extra_context["summary_rows"] = [
                {
                    "name": e.key,
                    "resource": e.resource,
                    "start": fmt_hours(e.start_hours),
                    "end": fmt_hours(e.end_hours),
                    "critical": e.key in critical,
                }
                for e in sorted(summary.schedule.entries, key=lambda e: (e.start_hours, e.key))
            ]
            extra_context["gantt"] = mark_safe(  # escaped by campaigns/charts/gantt.py
                gantt_svg(
                    [
                        GanttStage(
                            key=e.key,
                            resource=e.resource if e.machine else None,
                            start_hours=e.start_hours,
                            end_hours=e.end_hours,
                            critical=e.key in critical,
                        )
                        for e in summary.schedule.entries
                    ],
                    float(campaign.window_hours),
                    [
                        GanttLot(
                            label=f"{lot.plan} ×{lot.quantity}",
                            hours=float(lot.plan.duration_hours),
                            quantity=lot.quantity,
                        )
                        for lot in campaign.lots.select_related("plan")
                    ],
                )
            )
        writer = _role_in(request, campaign.team_id, WRITERS)
        extra_context["can_commit"] = campaign.is_draft and writer
        extra_context["can_close"] = not campaign.is_draft and not campaign.is_closed and writer
        extra_context["baseline"] = campaign.baseline_or_none()
        # Already found above: go straight to Django's view, skipping the mixin's second lookup.
        return admin.ModelAdmin.change_view(self, request, object_id, form_url, extra_context)

    def get_urls(self) -> list[Any]:
        return [
            path(
                "<path:object_id>/commit/",
                self.admin_site.admin_view(self.commit_view),
                name="campaigns_campaign_commit",
            ),
            path(
                "<path:object_id>/close/",
                self.admin_site.admin_view(self.close_view),
                name="campaigns_campaign_close",
            ),
            path(
                "<path:object_id>/compare/",
                self.admin_site.admin_view(self.compare_view),
                name="campaigns_campaign_compare",
            ),
            *super().get_urls(),
        ]

    def _writable_campaign(self, request: HttpRequest, object_id: str) -> Campaign:
        campaign: Campaign | None = self.get_object(request, object_id)
        if campaign is None or not _role_in(request, campaign.team_id, WRITERS):
            raise Http404("No such campaign.")
        return campaign

    def commit_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        """The confirmation page: the plan's warnings and what commit freezes; commit only on
        its explicit second click (a POST carrying ``confirm``)."""
        campaign = self._writable_campaign(request, object_id)
        change_url = reverse("admin:campaigns_campaign_change", args=[object_id])
        if request.method == "POST" and request.POST.get("confirm") == "yes":
            self._commit(request, campaign)
            return HttpResponseRedirect(change_url)
        if not campaign.is_draft:
            messages.warning(request, f"“{campaign}” is already committed.")
            return HttpResponseRedirect(change_url)
        context = {
            **self.admin_site.each_context(request),
            "title": f"Commit “{campaign}”?",
            "campaign": campaign,
            "problems": campaign.commit_problems(),
            "warnings": commit_warnings(campaign),
            "opts": self.model._meta,
            "change_url": change_url,
        }
        return TemplateResponse(request, "admin/campaigns/campaign/commit.html", context)

    def compare_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        """Compare runs: one metric (``?metric=``, default the one most runs log) of every
        run of the campaign on shared axes, coloured by item, pilots dashed, each series
        downsampled (campaigns/domain/downsampling.py). Readers of the campaign's team only (else
        404).
        Queries: the campaign, the metric names, the runs, and one for every series."""
        campaign: Campaign | None = self.get_object(request, object_id)
        if campaign is None or not _role_in(request, campaign.team_id, READERS):
            raise Http404("No such campaign.")
        names = readings.campaign_metric_names(campaign.pk)
        metric = request.GET.get("metric") or (names[0][0] if names else "")
        if names and metric not in {n for n, _ in names}:
            raise Http404("No such metric in this campaign.")
        runs = list(
            Run.objects.filter(campaign=campaign)
            .select_related("variant")
            .order_by("variant__name", "kind", "run_id")
        )
        by_run = readings.campaign_series(campaign.pk, metric) if metric else {}
        colours: dict[int | None, str] = {}
        legend: list[dict[str, Any]] = []
        lines: list[Overlaid] = []
        for run in runs:
            shown = by_run.get(run.pk)
            if shown is None:
                continue
            colour = colours.setdefault(run.variant_id, PALETTE[len(colours) % len(PALETTE)])
            dashed = run.kind == "pilot"
            lines.append(Overlaid(run.run_id, colour, dashed, shown.points))
            legend.append(
                {
                    "run": run,
                    "item": run.variant.name if run.variant else "—",
                    "colour": colour,
                    "dashed": dashed,
                    "count": shown.count,
                    "url": reverse("admin:campaigns_run_change", args=[run.pk]),
                }
            )
        context = {
            **self.admin_site.each_context(request),
            "title": f"Compare runs of “{campaign}”",
            "campaign": campaign,
            "opts": self.model._meta,
            "change_url": reverse("admin:campaigns_campaign_change", args=[object_id]),
            "names": names,
            "metric": metric,
            "legend": legend,
            # escaped by campaigns/charts/curves.py
            "svg": mark_safe(overlay_svg(metric, lines)) if metric else "",
        }
        return TemplateResponse(request, "admin/campaigns/campaign/compare.html", context)

    def close_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        """Close the campaign with its conclusion: the same form as the API's close."""
        campaign = self._writable_campaign(request, object_id)
        change_url = reverse("admin:campaigns_campaign_change", args=[object_id])
        form = CloseCampaignForm(request.POST if request.method == "POST" else None)
        if request.method == "POST" and form.is_valid():
            try:
                services.close_campaign(
                    campaign=campaign,
                    user=request.user,
                    conclusion=form.cleaned_data["conclusion"],
                    stop_running=form.cleaned_data["stop_running"],
                )
            except ValidationError as exc:
                _refusal_to_form(form, exc)
            except RunsStillRunning as exc:
                form.add_error("stop_running", f"{exc}.")
            except PlanFrozen as exc:
                form.add_error(None, f"{exc}.")
            else:
                messages.success(request, f"“{campaign}” is closed.")
                return HttpResponseRedirect(change_url)
        context = {
            **self.admin_site.each_context(request),
            "title": f"Close “{campaign}”",
            "campaign": campaign,
            "form": form,
            "opts": self.model._meta,
            "change_url": change_url,
            "running_runs": list(
                campaign.runs.filter(status="running").values_list("run_id", flat=True)
            ),
        }
        return TemplateResponse(request, "admin/campaigns/campaign/close.html", context)

    def _commit(self, request: HttpRequest, campaign: Campaign) -> bool:
        try:
            services.commit_plan(campaign=campaign, user=request.user)
        except CommitRefused as exc:
            messages.error(request, f"“{campaign}” was not committed: {'; '.join(exc.problems)}.")
            return False
        except PlanFrozen as exc:
            messages.warning(request, f"“{campaign}”: {exc}.")
            return False
        messages.success(
            request, f"“{campaign}” is committed: the plan baseline is frozen from now on."
        )
        return True

    @admin.action(description="Commit the plan (freeze the baseline)")
    def commit_selected(self, request: HttpRequest, queryset: QuerySet[Any]) -> None:
        for campaign in queryset:
            if _role_in(request, campaign.team_id, WRITERS):
                self._commit(request, campaign)
            else:
                messages.error(request, f"“{campaign}”: viewers cannot commit.")

    @admin.action(description="Issue an ingest key (shown once)")
    def issue_ingest_key(self, request: HttpRequest, queryset: QuerySet[Any]) -> None:
        for campaign in queryset:
            if not _role_in(request, campaign.team_id, OWNERS):
                messages.error(request, f"“{campaign}”: only the team's owners issue ingest keys.")
                continue
            _key, raw = services.issue_ingest_key(campaign=campaign, user=request.user)
            messages.warning(request, ingest_key_banner(campaign, raw, request))

    @admin.action(description="Revoke the ingest keys of the selected campaigns")
    def revoke_ingest_keys(self, request: HttpRequest, queryset: QuerySet[Any]) -> None:
        for campaign in queryset:
            if not _role_in(request, campaign.team_id, {Role.OWNER}):
                messages.error(request, f"“{campaign}”: only the team's owners revoke ingest keys.")
                continue
            revoked = services.revoke_ingest_keys(campaign=campaign, user=request.user)
            # A leaked key is revoked with its siblings: issuing a fresh one is one click.
            messages.success(
                request,
                f"“{campaign}”: {revoked} ingest key(s) revoked; loops using them get 401 now.",
            )


class MembershipForm(forms.ModelForm[Membership]):
    """Members are named by username: owners never see a list of every user of the service."""

    username = forms.CharField(max_length=150)

    class Meta:
        model = Membership
        fields = ["role"]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if self.instance.pk:
            self.fields["username"].initial = self.instance.user.get_username()

    def clean_username(self) -> str:
        from django.contrib.auth import get_user_model

        username: str = self.cleaned_data["username"].strip()
        user = get_user_model().objects.filter(username=username).first()
        if user is None:
            raise ValidationError(
                f"No user named {username!r}: create it with "
                f"`manage.py create_team TEAM --member {username}`."
            )
        self.instance.user = user
        return username


class TeamForm(forms.ModelForm[Team]):
    # Write-only like the API's (docs/api.md): never shown back; blank keeps the stored one.
    webhook_secret = forms.CharField(
        required=False,
        max_length=200,
        widget=forms.PasswordInput(render_value=False),
        help_text="Signs each alert (X-Desk-Signature: sha256=<hex HMAC-SHA256 of the body>). "
        "Never shown back; leave blank to keep the stored secret.",
    )

    class Meta:
        model = Team
        fields = ["name", "webhook_url", "webhook_secret"]


@admin.register(Team)
class TeamAdmin(NotFoundOutsideTeams, admin.ModelAdmin[Team]):
    form = TeamForm
    list_display = ["name", "created_at"]
    search_fields = ["name"]
    # The alert webhook (docs/domain.md §19): a URL typed without a scheme means https.
    formfield_overrides = {URLField: {"assume_scheme": "https"}}

    class MembershipInline(admin.TabularInline[Membership, Team]):
        model = Membership
        form = MembershipForm
        fields = ["username", "role"]
        extra = 0

        # Team roles, not Django's model permissions: a team's owners manage its members.
        def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
            return True

        def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
            return _role_in(request, obj.pk if obj else None, OWNERS)

        def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
            return _role_in(request, obj.pk if obj else None, OWNERS)

        def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
            return _role_in(request, obj.pk if obj else None, OWNERS)

    inlines = [MembershipInline]

    def get_queryset(self, request: HttpRequest) -> QuerySet[Any]:
        qs = super().get_queryset(request)
        return qs if request.user.is_superuser else qs.filter(pk__in=_team_ids(request))

    def has_module_permission(self, request: HttpRequest) -> bool:
        return request.user.is_active and (request.user.is_superuser or bool(_team_ids(request)))

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return self.has_module_permission(request)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return request.user.is_superuser

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        # Owners manage their team's members.
        return _role_in(request, obj.pk if obj else None, OWNERS)

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return request.user.is_superuser

    def save_model(self, request: HttpRequest, obj: Team, form: Any, change: bool) -> None:
        # The webhook goes through its one write path (services.set_team_webhook), as from the
        # API: the form's copy of it is put back before the team's own fields are saved.
        stored = Team.objects.filter(pk=obj.pk).values("webhook_url", "webhook_secret").first()
        obj.webhook_url = stored["webhook_url"] if stored else ""
        obj.webhook_secret = stored["webhook_secret"] if stored else ""
        super().save_model(request, obj, form, change)
        saved = services.set_team_webhook(
            team=obj,
            user=request.user,
            webhook_url=form.cleaned_data.get("webhook_url") or "",
            webhook_secret=form.cleaned_data.get("webhook_secret") or None,
        )
        obj.webhook_url, obj.webhook_secret = saved.webhook_url, saved.webhook_secret


@admin.register(PlanBaseline)
class PlanBaselineAdmin(TeamScopedAdmin):
    team_path = "campaign__team"
    list_display = ["campaign", "created_at"]
    readonly_fields = ["campaign", "snapshot", "created_at"]

    def has_add_permission(self, request: HttpRequest, *args: Any) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(Run)
class RunAdmin(TeamScopedAdmin):
    list_display = [
        "run_id",
        "campaign",
        "variant",
        "kind",
        "status",
        "observed_hours",
        "created_at",
    ]
    list_filter = ["status", "kind"]
    search_fields = ["run_id", "run_name", "campaign__title"]
    readonly_fields = [
        "team",
        "campaign",
        "run_id",
        "run_name",
        "mlflow_inputs",
        "segment_table",
        "variant",
        "kind",
        "config",
        "config_digest",
        "status",
        "stop_rule",
        "stop_reason",
        "stop_step",
        "stopped_at",
        "observed_hours",
        "last_step",
        "created_at",
        "finished_at",
        "stop",
        "curves",
        "checkpoint_table",
        "throughput_table",
    ]
    fieldsets = [
        (
            None,
            {
                "fields": [
                    ("run_id", "run_name", "campaign", "team"),
                    ("variant", "kind", "status"),
                    ("last_step", "observed_hours"),
                    ("created_at", "finished_at"),
                ]
            },
        ),
        ("Stop", {"fields": ["stop"]}),
        ("Segments and datasets", {"fields": ["segment_table", "mlflow_inputs"]}),
        ("Curves", {"fields": ["curves"]}),
        ("Checkpoints", {"fields": ["checkpoint_table"]}),
        ("Throughput", {"fields": ["throughput_table"]}),
        ("Configuration", {"fields": ["config", "config_digest"], "classes": ["collapse"]}),
    ]

    @admin.display(description="Stop")
    def stop(self, run: Run) -> str:
        if run.status != "stopped":
            return f"not stopped ({run.get_status_display().lower()})"
        rule = run.stop_rule.get_kind_display() if run.stop_rule is not None else "by hand"
        at = run.stopped_at.strftime("%Y-%m-%d %H:%M %Z") if run.stopped_at else "time unknown"
        return format_html(
            "<strong>{}</strong> at step {}, {}: {}", rule, run.stop_step, at, run.stop_reason
        )

    @admin.display(description="Segments (a resumed run)")
    def segment_table(self, run: Run) -> str:
        """Each ended stretch of a resumed run with its own hours (docs/mlflow.md)."""
        rows = format_html_join(
            "",
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            ((s.number, s.started_at, s.ended_at, s.status, s.hours) for s in run.segments.all()),
        )
        if not rows:
            return "one segment (never resumed)"
        head = "<table><tr><th>#</th><th>from</th><th>to</th><th>ended</th><th>hours</th></tr>"
        return format_html("{}{}</table>", mark_safe(head), rows)

    @admin.display(description="Dataset inputs (MLflow)")
    def mlflow_inputs(self, run: Run) -> str:
        rows = format_html_join(
            "",
            "<li><code>{}</code> digest {} ({})</li>",
            (
                (
                    (i.get("dataset") or {}).get("name", ""),
                    (i.get("dataset") or {}).get("digest", ""),
                    (i.get("dataset") or {}).get("source_type", ""),
                )
                for i in run.inputs
            ),
        )
        return format_html("<ul>{}</ul>", rows) if rows else "none logged"

    @admin.display(description="Curves")
    def curves(self, run: Run) -> str:
        """Each metric downsampled (campaigns/domain/downsampling.py) and drawn
        (campaigns/charts/curves.py)."""
        names = readings.metric_names(run)
        if not names:
            return "no metrics logged"
        stop_step = run.stop_step if run.status == "stopped" else None
        drawings = []
        for name, _count in names[:8]:
            found = readings.metric_series(run, name, 600)
            drawings.append(curves_svg(name, found.points, count=found.count, stop_step=stop_step))
        return mark_safe("".join(f"<div>{d}</div>" for d in drawings))  # parts escaped above

    @admin.display(description="Checkpoints")
    def checkpoint_table(self, run: Run) -> str:
        rows = [
            format_html(
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>"
                "<td><code>{}</code></td><td>{}</td></tr>",
                c.step,
                ", ".join(str(x) for x in c.components) or "–",
                _size(c.size_bytes),
                _seconds(c.write_seconds),
                _seconds(c.restore_seconds),
                c.location or "–",
                "yes" if c.resume_verified else "no",
            )
            for c in run.checkpoints.order_by("step", "id")
        ]
        if not rows:
            return "no checkpoints"
        head = (
            "<table><thead><tr><th>step</th><th>components</th><th>size</th>"
            "<th>write s</th><th>restore s</th><th>location</th><th>verified</th></tr>"
            "</thead><tbody>"
        )
        return mark_safe(head + "".join(rows) + "</tbody></table>")  # parts escaped above

    @admin.display(description="Throughput")
    def throughput_table(self, run: Run) -> str:
        rows = [
            format_html(
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                t.created_at.strftime("%Y-%m-%d %H:%M %Z"),
                _rate(t.tokens_per_second),
                _rate(t.samples_per_second),
                t.gpus,
                _seconds(t.measured_seconds),
            )
            for t in run.throughputs.all()
        ]
        if not rows:
            return "no throughput measured"
        head = (
            "<table><thead><tr><th>at</th><th>tokens/s</th><th>samples/s</th><th>GPUs</th>"
            "<th>measured over s</th></tr></thead><tbody>"
        )
        return mark_safe(head + "".join(rows) + "</tbody></table>")  # parts escaped above

    def has_add_permission(self, request: HttpRequest, *args: Any) -> bool:
        return False  # runs come from training loops, through the API

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


def _size(size: int | None) -> str:
    if size is None:
        return "–"
    value = float(size)
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if value < 1000 or unit == "TB":
            return f"{value:.3g} {unit}"
        value /= 1000
    return f"{size} B"


def _seconds(value: float | None) -> str:
    return "–" if value is None else f"{value:.3g}"


def _rate(value: float | None) -> str:
    return "–" if value is None else f"{value:,.0f}"


def _error_links(adminform: Any, inline_formsets: Any) -> list[dict[str, str]]:
    """Every error on the page as a link to its field (``#id_<field>``), for the summary at
    the top: the first screen then says what is wrong and where."""
    links: list[dict[str, str]] = []

    def add(form: Any, label_prefix: str) -> None:
        for name, errors in form.errors.items():
            if name == "__all__" or name not in form.fields:
                anchor = f"#{form.prefix}" if form.prefix else "#content"
                label = label_prefix.rstrip(": ") or "Form"
            else:
                anchor = f"#{form[name].auto_id}"
                label = f"{label_prefix}{form.fields[name].label or name}"
            for error in errors:
                links.append({"href": anchor, "label": label, "message": str(error)})

    if adminform is not None:
        add(adminform.form, "")
    for inline in inline_formsets:
        formset = inline.formset
        title = str(inline.opts.verbose_name_plural).capitalize()
        for error in formset.non_form_errors():
            links.append({"href": f"#{formset.prefix}-group", "label": title, "message": error})
        for i, form in enumerate(formset.forms):
            if form.errors:
                add(form, f"{title} row {i + 1}: ")
    return links


def ingest_key_banner(campaign: Campaign, raw: str, request: HttpRequest) -> str:
    """The once-shown key with what a training loop needs beside it: the campaign id, its items
    with their ids, and copy-paste snippets (the shipped client, curl) with those ids filled in."""
    items = list(campaign.items.exclude(status="cut").order_by("id").values_list("id", "name"))
    item_id = items[0][0] if items else 0
    base = request.build_absolute_uri("/").rstrip("/")
    client = (
        f"export CAMPAIGN_DESK_URL={base} CAMPAIGN_DESK_KEY={raw}\n"
        "python3 - <<'PY'\n"
        "from campaign_desk_client import CampaignDesk\n"
        f'with CampaignDesk().run(campaign={campaign.pk}, run_id="first-run", '
        f'variant={item_id}, kind="pilot", config={{}}) as run:\n'
        "    run.log(1, loss=2.5)\n"
        "PY"
    )
    curl = (
        f'curl -sS -X POST "{base}/api/v1/campaigns/{campaign.pk}/runs/" '
        f'-H "Authorization: Bearer {raw}" -H "Content-Type: application/json" '
        f'-d \'{{"run_id": "first-run", "variant": {item_id}, "kind": "pilot", "config": {{}}}}\''
    )
    return format_html(
        '<div id="ingest-key-banner">Ingest key for “{}” (campaign id <strong>{}</strong>), '
        "shown once, copy it now: <code>{}</code><br>Items: {}"
        '<br>With the shipped client:<pre class="snippet">{}</pre>'
        'With curl:<pre class="snippet">{}</pre></div>',
        campaign,
        campaign.pk,
        raw,
        format_html_join(", ", "{} (id <strong>{}</strong>)", ((n, i) for i, n in items))
        or "none yet",
        client,
        curl,
    )
