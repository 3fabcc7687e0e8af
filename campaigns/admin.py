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
from django.db.models import Count, Q, QuerySet
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.urls import path, reverse
from django.utils.html import format_html

from ledger.forms import ObservedStageForm

from . import services
from .models import (
    AMENDABLE_ITEM_FIELDS,
    Campaign,
    CampaignStatus,
    CommitRefused,
    DecisionPoint,
    IngestKey,
    LotReservation,
    Membership,
    PlanBaseline,
    PlanFrozen,
    PlannedItem,
    Role,
    Run,
    Stage,
    StopRule,
    Team,
    team_ids_for,
)
from .planning import campaign_summary, fmt_hours


def _team_ids(request: HttpRequest, *, write: bool = False) -> list[int]:
    return team_ids_for(request.user, write=write)


def _role_in(request: HttpRequest, team_id: int | None, roles: set[str]) -> bool:
    if request.user.is_superuser:
        return True
    if team_id is None:
        return False
    return Membership.objects.filter(
        user_id=int(request.user.pk or 0), team_id=team_id, role__in=roles
    ).exists()


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
    extra = 0

    def _writable(self, request: HttpRequest, obj: Campaign | None) -> bool:
        if obj is None:
            return True
        return _role_in(request, obj.team_id, WRITERS)

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return True

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return self._writable(request, obj)

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return self._writable(request, obj)

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return self._writable(request, obj) and (obj is None or obj.is_draft)


ITEM_FIELDS = [
    "name",
    "role",
    "tier",
    "planned_hours",
    "prep_hours",
    "gpu",
    "config",
    "rationale",
    "status",
]


class PlannedItemForm(forms.ModelForm[PlannedItem]):
    amendment_reason = forms.CharField(
        required=False,
        widget=forms.TextInput(attrs={"size": 30}),
        help_text="After commit: why this change (recorded as an amendment).",
    )

    class Meta:
        model = PlannedItem
        fields = ITEM_FIELDS
        widgets = {
            "rationale": forms.Textarea(attrs={"rows": 2, "cols": 30}),
            "config": forms.Textarea(attrs={"rows": 2, "cols": 24}),
        }

    def amended_fields(self) -> dict[str, Any]:
        """Amendable fields whose posted value differs from what is stored."""
        if not self.instance.pk:
            return {}
        stored = PlannedItem.objects.get(pk=self.instance.pk)
        data = self.cleaned_data
        return {
            f: data[f] for f in AMENDABLE_ITEM_FIELDS if f in data and data[f] != getattr(stored, f)
        }

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        campaign = getattr(self.instance, "campaign", None) if self.instance.pk else None
        committed = campaign is not None and not campaign.is_draft
        reason = (data.get("amendment_reason") or "").strip()
        if committed and not reason and self.amended_fields():
            raise ValidationError(
                {"amendment_reason": "The plan is committed: say why this item changes."}
            )
        return data


ITEM_INLINE_FIELDS: list[Any] = [*ITEM_FIELDS, "amendment_reason"]


class PlannedItemInline(CampaignInline):
    model = PlannedItem
    form = PlannedItemForm
    fields = ITEM_INLINE_FIELDS

    def get_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        if obj is None or obj.is_draft:
            return [f for f in ITEM_INLINE_FIELDS if f != "amendment_reason"]
        return ITEM_INLINE_FIELDS


class StopRuleInline(CampaignInline):
    model = StopRule
    fields = ["kind", "metric", "comparator", "threshold", "description"]

    def _writable(self, request: HttpRequest, obj: Campaign | None) -> bool:
        # Stop rules are written before the runs and frozen with the plan.
        return super()._writable(request, obj) and (obj is None or obj.is_draft)


STAGE_INLINE_FIELDS: list[Any] = list(ObservedStageForm.Meta.fields)


class StageInline(CampaignInline):
    model = Stage
    # Observed hours after commit need a deviation note beyond 10% of the plan.
    form = ObservedStageForm
    fields = STAGE_INLINE_FIELDS

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> list[str]:
        if obj is not None and not obj.is_draft:
            # The plan is frozen: only what was observed stays editable.
            observed = {"observed_hours", "deviation_note"}
            return [str(f) for f in self.fields if f not in observed]
        return []

    def formfield_for_foreignkey(self, db_field: Any, request: HttpRequest, **kwargs: Any) -> Any:
        if db_field.name == "variant":
            kwargs["queryset"] = PlannedItem.objects.filter(campaign_id=_object_id(request))
        return super().formfield_for_foreignkey(db_field, request, **kwargs)

    def formfield_for_manytomany(self, db_field: Any, request: HttpRequest, **kwargs: Any) -> Any:
        if db_field.name == "depends_on":
            kwargs["queryset"] = Stage.objects.filter(campaign_id=_object_id(request))
            kwargs["widget"] = forms.SelectMultiple(attrs={"size": 3})
        return super().formfield_for_manytomany(db_field, request, **kwargs)


class DecisionPointInline(CampaignInline):
    model = DecisionPoint
    fields = ["label", "outcome", "rationale", "cut_variants", "decided_by", "decided_at"]
    readonly_fields = ["decided_by", "decided_at"]

    def formfield_for_manytomany(self, db_field: Any, request: HttpRequest, **kwargs: Any) -> Any:
        if db_field.name == "cut_variants":
            kwargs["queryset"] = PlannedItem.objects.filter(
                campaign_id=_object_id(request)
            ).exclude(tier="mandatory")
            kwargs["widget"] = forms.SelectMultiple(attrs={"size": 3})
        return super().formfield_for_manytomany(db_field, request, **kwargs)


class LotReservationInline(CampaignInline):
    model = LotReservation
    fields = ["plan", "quantity", "start"]

    def _writable(self, request: HttpRequest, obj: Campaign | None) -> bool:
        # The reserved lots are posted to the ledger at commit; they are frozen with the plan.
        return super()._writable(request, obj) and (obj is None or obj.is_draft)


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


# --- Campaign ------------------------------------------------------------------------------


class CampaignForm(forms.ModelForm[Campaign]):
    class Meta:
        model = Campaign
        fields = [
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
            "required_checkpoint_components",
            "conclusion",
        ]
        widgets = {
            "question": forms.Textarea(attrs={"rows": 2}),
            "expected_deliverables": forms.Textarea(attrs={"rows": 2}),
            "conclusion": forms.Textarea(attrs={"rows": 2}),
        }


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
    list_filter = ["status", "team", "items__tier"]
    search_fields = ["title", "question", "corpus_name", "corpus_revision"]
    inlines = [
        PlannedItemInline,
        StopRuleInline,
        StageInline,
        DecisionPointInline,
        LotReservationInline,
        IngestKeyInline,
    ]
    actions = [
        "commit_selected",
        "generate_closing_report",
        "issue_ingest_key",
        "revoke_ingest_keys",
    ]

    def get_queryset(self, request: HttpRequest) -> QuerySet[Any]:
        qs: QuerySet[Any] = super().get_queryset(request)
        annotated: QuerySet[Any] = qs.select_related("team").annotate(
            _mandatory=Count("items", filter=Q(items__tier="mandatory"), distinct=True)
        )
        return annotated

    @admin.display(description="mandatory items", ordering="_mandatory")
    def mandatory_items(self, obj: Any) -> int:
        return int(getattr(obj, "_mandatory", 0))

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> list[str]:
        ro = ["status", "committed_at", "committed_by"]
        if obj is not None and not obj.is_draft:
            # The question, corpus and window are part of the frozen plan.
            ro += [
                "team",
                "title",
                "question",
                "corpus_name",
                "corpus_revision",
                "decision_threshold",
                "window_hours",
                "budget",
                "currency",
                "required_checkpoint_components",
            ]
        return ro

    def get_fieldsets(self, request: HttpRequest, obj: Any = None) -> Any:
        return [
            (None, {"fields": ["team", "title", "status", "question", "decision_threshold"]}),
            (
                "Corpus and deliverables",
                {"fields": ["corpus_name", "corpus_revision", "expected_deliverables"]},
            ),
            (
                "Window and budget",
                {
                    "fields": [
                        "window_hours",
                        "budget",
                        "currency",
                        "required_checkpoint_components",
                    ]
                },
            ),
            ("Outcome", {"fields": ["conclusion", "committed_at", "committed_by"]}),
        ]

    def formfield_for_foreignkey(self, db_field: Any, request: HttpRequest, **kwargs: Any) -> Any:
        if db_field.name == "team" and not request.user.is_superuser:
            kwargs["queryset"] = Team.objects.filter(pk__in=_team_ids(request, write=True))
        return super().formfield_for_foreignkey(db_field, request, **kwargs)

    def save_model(self, request: HttpRequest, obj: Any, form: Any, change: bool) -> None:
        if not change:
            obj.created_by = request.user
        if change and not obj.is_draft:
            # Only the conclusion and expected deliverables stay editable after commit.
            Campaign.objects.filter(pk=obj.pk).update(
                conclusion=obj.conclusion, expected_deliverables=obj.expected_deliverables
            )
            return
        super().save_model(request, obj, form, change)

    def save_formset(self, request: HttpRequest, form: Any, formset: Any, change: bool) -> None:
        campaign = form.instance
        if formset.model is PlannedItem and change and not campaign.is_draft:
            for item_form in formset.forms:
                if not item_form.has_changed() or item_form in formset.deleted_forms:
                    continue
                item = item_form.instance
                changes = item_form.amended_fields()
                reason = item_form.cleaned_data.get("amendment_reason", "")
                if item.pk is None:
                    item.campaign = campaign
                    item.amend(reason=reason or "added after commit", user=request.user)
                elif changes:
                    fresh = PlannedItem.objects.get(pk=item.pk)
                    fresh.amend(reason=reason, user=request.user, **changes)
                if "status" in item_form.changed_data:
                    PlannedItem.objects.filter(pk=item.pk).update(status=item.status)
            # The admin's change message reads these; amendments are the record here.
            formset.new_objects, formset.changed_objects, formset.deleted_objects = [], [], []
            return
        if formset.model is DecisionPoint:
            instances = formset.save(commit=False)
            for decision in instances:
                if decision.outcome != "pending" and decision.decided_at is None:
                    from django.utils import timezone

                    decision.decided_by = request.user
                    decision.decided_at = timezone.now()
                decision.save()
            formset.save_m2m()
            for decision in formset.new_objects + [o for o, _ in formset.changed_objects]:
                cut = list(decision.cut_variants.all())
                if decision.outcome == "cut" and cut:
                    PlannedItem.objects.filter(pk__in=[i.pk for i in cut]).update(status="cut")
            for obj in formset.deleted_objects:
                obj.delete()
            return
        try:
            super().save_formset(request, form, formset, change)
        except PlanFrozen as exc:
            messages.error(request, str(exc))

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
        extra_context["can_commit"] = campaign.is_draft and _role_in(
            request, campaign.team_id, WRITERS
        )
        extra_context["baseline"] = campaign.baseline_or_none()
        from estimates.forecasts import forecast_panel_html
        from ledger.admin import campaign_reports_url

        extra_context["reports_url"] = campaign_reports_url(campaign)
        extra_context["forecast_panel"] = forecast_panel_html(campaign)
        # Already found above: go straight to Django's view, skipping the mixin's second lookup.
        return admin.ModelAdmin.change_view(self, request, object_id, form_url, extra_context)

    def get_urls(self) -> list[Any]:
        return [
            path(
                "<path:object_id>/commit/",
                self.admin_site.admin_view(self.commit_view),
                name="campaigns_campaign_commit",
            ),
            *super().get_urls(),
        ]

    def commit_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        campaign = self.get_object(request, object_id)
        if campaign is None:
            raise Http404("No such campaign.")
        if request.method != "POST":
            return HttpResponseRedirect(
                reverse("admin:campaigns_campaign_change", args=[object_id])
            )
        if not _role_in(request, campaign.team_id, WRITERS):
            raise Http404("No such campaign.")
        self._commit(request, campaign)
        return HttpResponseRedirect(reverse("admin:campaigns_campaign_change", args=[object_id]))

    def _commit(self, request: HttpRequest, campaign: Campaign) -> bool:
        try:
            campaign.commit(request.user)
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

    @admin.action(description="Generate closing report")
    def generate_closing_report(self, request: HttpRequest, queryset: QuerySet[Any]) -> None:
        from ledger.admin import campaign_reports_link
        from ledger.reports import request_report

        for campaign in queryset:
            if not _role_in(request, campaign.team_id, WRITERS):
                messages.error(request, f"“{campaign}”: viewers cannot start a report.")
                continue
            request_report(campaign, request.user)
            messages.success(
                request,
                format_html(
                    "A closing report of “{}” is being built: {}",
                    campaign,
                    campaign_reports_link(campaign),
                ),
            )

    @admin.action(description="Issue an ingest key (shown once)")
    def issue_ingest_key(self, request: HttpRequest, queryset: QuerySet[Any]) -> None:
        for campaign in queryset:
            if not _role_in(request, campaign.team_id, OWNERS):
                messages.error(request, f"“{campaign}”: only the team's owners issue ingest keys.")
                continue
            _key, raw = services.issue_ingest_key(campaign=campaign, user=request.user)
            messages.warning(
                request,
                format_html(
                    "Ingest key for “{}”, shown once, copy it now: <code>{}</code>", campaign, raw
                ),
            )

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


@admin.register(Team)
class TeamAdmin(NotFoundOutsideTeams, admin.ModelAdmin[Team]):
    list_display = ["name", "created_at"]
    search_fields = ["name"]

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
    search_fields = ["run_id", "campaign__title"]
    readonly_fields = [
        "team",
        "campaign",
        "run_id",
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
    ]

    def has_add_permission(self, request: HttpRequest, *args: Any) -> bool:
        return False  # runs come from training loops, through the API

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


def campaign_status_badge(campaign: Campaign) -> str:
    return str(CampaignStatus(campaign.status).label)
