"""The campaign's change page, where people plan a campaign: one page holds the whole plan
(the inline tables of campaigns/admin/inlines.py), with its own pages to commit the plan, close
the campaign and compare its runs (campaigns/admin/campaign_views.py), and the actions that issue
and revoke ingest keys. Every write goes through campaigns/services."""

from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.db.models import Count, Q, QuerySet
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect

from campaigns.admin.campaign_pages import (
    error_links,
    issued_keys_page,
    plan_overview,
    row_pages,
)
from campaigns.admin.campaign_views import CampaignPageViews
from campaigns.admin.forms import (
    CampaignChildForm,
    CampaignForm,
)
from campaigns.admin.inline_writes import INLINE_WRITERS
from campaigns.admin.inlines import (
    ROWS_PER_PAGE,
    DecisionPointInline,
    IngestKeyInline,
    ItemWorkInline,
    LotReservationInline,
    PlannedItemInline,
    StageInline,
    StopRuleInline,
    rows_page,
)
from campaigns.admin.refusals import refusal_of
from campaigns.admin.service_rows import ServiceWrittenRows
from campaigns.admin.shared_choices import shared_choice_lists
from campaigns.admin.tenancy import (
    OWNERS,
    WRITERS,
    TeamScopedAdmin,
    caller_has_role,
    caller_team_ids,
)
from campaigns.models import Campaign, Role, Team
from campaigns.models.field_lists import CAMPAIGN_FIELDS
from campaigns.services.campaigns import (
    EDITABLE_AFTER_COMMIT,
    create_campaign,
    real_user,
    update_campaign,
)
from campaigns.services.keys import issue_ingest_key, revoke_ingest_keys


@admin.register(Campaign)
class CampaignAdmin(CampaignPageViews, ServiceWrittenRows, TeamScopedAdmin):
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
            ro += [f for f in CAMPAIGN_FIELDS if f not in EDITABLE_AFTER_COMMIT]
        if obj is not None and obj.is_closed:
            ro += list(EDITABLE_AFTER_COMMIT)
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
        writable = caller_team_ids(request, write=True)
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
        inline_formsets = context.get("inline_admin_formsets") or []
        context["error_links"] = error_links(context.get("adminform"), inline_formsets)
        context["shared_choices"] = shared_choice_lists(inline_formsets)
        return super().render_change_form(request, context, add, change, form_url, obj)

    def formfield_for_foreignkey(self, db_field: Any, request: HttpRequest, **kwargs: Any) -> Any:
        if db_field.name == "team" and not request.user.is_superuser:
            kwargs["queryset"] = Team.objects.filter(pk__in=caller_team_ids(request, write=True))
        return super().formfield_for_foreignkey(db_field, request, **kwargs)

    def get_formsets_with_inlines(self, request: HttpRequest, obj: Any = None) -> Any:
        for formset, inline in super().get_formsets_with_inlines(request, obj):
            form = formset.form
            if isinstance(form, type) and issubclass(form, CampaignChildForm):
                # The class is this request's own (CampaignInline.get_formset builds it), so
                # the campaign is set on it: a subclass would build every field again.
                form.parent_campaign = obj
            yield formset, inline

    def get_formset_kwargs(
        self, request: HttpRequest, obj: Any, inline: Any, prefix: str
    ) -> dict[str, Any]:
        """Django's, with one mutable copy of the post for every inline of the request: Django
        deep-copies the whole post for each of the seven (no formset here changes its data)."""
        params: dict[str, Any] = {
            "instance": obj,
            "prefix": prefix,
            "queryset": inline.get_queryset(request),
        }
        if request.method == "POST":
            posted = getattr(request, "_campaign_desk_post", None)
            if posted is None:
                posted = request.POST.copy()
                request._campaign_desk_post = posted  # type: ignore[attr-defined]
            params["data"], params["files"] = posted, request.FILES
            params["save_as_new"] = "_saveasnew" in request.POST
        return params

    def write_row(self, request: HttpRequest, obj: Any, form: Any, change: bool) -> Any:
        data = {f: form.cleaned_data[f] for f in CAMPAIGN_FIELDS if f in form.cleaned_data}
        if not change:
            return create_campaign(acting_user=real_user(request.user), **data)
        changes = {f: data[f] for f in form.changed_data if f in data}
        if changes:
            update_campaign(campaign=obj, acting_user=real_user(request.user), **changes)
        return obj

    def save_related(self, request: HttpRequest, form: Any, formsets: Any, change: bool) -> None:
        form.instance.refresh_from_db()
        # The names typed on the page, per kind of row: a row naming one that was refused is
        # told so, not that no such row exists (campaigns/admin/inline_writes.py).
        typed = {
            formset.model: {
                str((row.cleaned_data or {}).get("name") or "").strip()
                for row in formset.forms
                if getattr(row, "cleaned_data", None)
            }
            for formset in formsets
        }
        for formset in formsets:
            formset.page_names = typed
            self.save_formset(request, form, formset, change=change)

    def save_formset(self, request: HttpRequest, form: Any, formset: Any, change: bool) -> None:
        writers = INLINE_WRITERS.get(formset.model)
        # The admin's change message reads these; the services' writes are the record.
        formset.new_objects, formset.changed_objects, formset.deleted_objects = [], [], []
        if writers is None:
            return  # read-only inlines (ingest keys)
        save, remove = writers
        campaign = form.instance
        # Each row's refusal is shown beside its fields and the whole save rolled back
        # (campaigns/admin/refusals.py).
        for row in formset.deleted_forms:
            if row.instance.pk is not None and remove is not None:
                with refusal_of(request, row.prefix):
                    remove(row.instance, request.user)
        for row in formset.forms:
            if row in formset.deleted_forms or not row.has_changed():
                continue
            row.page_names = getattr(formset, "page_names", {})
            with refusal_of(request, row.prefix):
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
        extra_context = {
            **(extra_context or {}),
            **plan_overview(campaign),
            **row_pages(campaign, rows_page(request), ROWS_PER_PAGE),
        }
        writer = caller_has_role(request, campaign.team_id, WRITERS)
        extra_context["can_commit"] = campaign.is_draft and writer
        extra_context["can_close"] = not campaign.is_draft and not campaign.is_closed and writer
        extra_context["baseline"] = campaign.baseline_or_none()
        extra_context["can_issue_key"] = not campaign.is_closed and caller_has_role(
            request, campaign.team_id, OWNERS
        )
        if request.method == "GET":
            # Nothing changes it on a GET: Django's view takes it instead of reading it again
            # (get_object). A post's form writes the posted values into its instance.
            request._campaign_desk_found = campaign  # type: ignore[attr-defined]
        # Already found above: go straight to Django's view, skipping the mixin's second lookup.
        return admin.ModelAdmin.change_view(self, request, object_id, form_url, extra_context)

    def get_object(self, request: HttpRequest, object_id: str, from_field: Any = None) -> Any:
        found = getattr(request, "_campaign_desk_found", None)
        if found is not None and from_field is None and str(found.pk) == str(object_id):
            del request._campaign_desk_found  # type: ignore[attr-defined]
            return found
        return super().get_object(request, object_id, from_field)

    def response_change(self, request: HttpRequest, obj: Any) -> HttpResponse:
        response = super().response_change(request, obj)
        page = rows_page(request)
        # "Save and continue editing" comes back to the page of rows that was saved.
        if page > 1 and isinstance(response, HttpResponseRedirect) and "_continue" in request.POST:
            joiner = "&" if "?" in response["Location"] else "?"
            response["Location"] = f"{response['Location']}{joiner}page={page}"
        return response

    @admin.action(description="Commit the plan (freeze the baseline)")
    def commit_selected(self, request: HttpRequest, queryset: QuerySet[Any]) -> None:
        for campaign in queryset:
            if caller_has_role(request, campaign.team_id, WRITERS):
                self._commit(request, campaign)
            else:
                messages.error(request, f"“{campaign}”: viewers cannot commit.")

    @admin.action(description="Issue an ingest key (shown once)")
    def issue_ingest_key(self, request: HttpRequest, queryset: QuerySet[Any]) -> Any:
        issued = []
        for campaign in queryset:
            if not caller_has_role(request, campaign.team_id, OWNERS):
                messages.error(request, f"“{campaign}”: only the team's owners issue ingest keys.")
                continue
            _key, raw = issue_ingest_key(campaign=campaign, acting_user=real_user(request.user))
            issued.append((campaign, raw))
        # The keys go in this answer's body only: Django's messages would carry them in a
        # signed, not encrypted, cookie (docs/domain.md §26).
        return issued_keys_page(self, request, issued) if issued else None

    @admin.action(description="Revoke the ingest keys of the selected campaigns")
    def revoke_ingest_keys(self, request: HttpRequest, queryset: QuerySet[Any]) -> None:
        for campaign in queryset:
            if not caller_has_role(request, campaign.team_id, {Role.OWNER}):
                messages.error(request, f"“{campaign}”: only the team's owners revoke ingest keys.")
                continue
            revoked = revoke_ingest_keys(campaign=campaign, acting_user=real_user(request.user))
            # A leaked key is revoked with its siblings: issuing a fresh one is one click.
            messages.success(
                request,
                f"“{campaign}”: {revoked} ingest key(s) revoked; loops using them get 401 now.",
            )
