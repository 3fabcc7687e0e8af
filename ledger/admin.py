"""Ledger entries (add-only), deliverables and closing reports in the admin, scoped by team.

Entries are appended through `ledger.services`, as the API appends them; once written they are
only read (a correction is a reversal, added as a new entry). Deliverables are submitted here
(from the campaign page) or through the API, both through `ledger.services.submit_deliverable`
and its checks; once stored they are only read. Reports are built by the worker and
downloaded here.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import QuerySet
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.html import format_html, format_html_join

from campaigns import admin as campaigns_admin
from campaigns.admin import TeamScopedAdmin
from campaigns.admin.refusals import REFUSALS, text_of
from campaigns.admin.tenancy import READERS
from campaigns.models import (
    Campaign,
    CommitOverTeamBudget,
    CommitRefused,
    Membership,
    PlanFrozen,
)
from campaigns.services.campaigns import real_user
from campaigns.services.plans import commit_plan
from ledger import services
from ledger.api.views import RENDERINGS, report_download
from ledger.models import (
    Deliverable,
    DeliverableFile,
    LedgerEntry,
    LedgerImmutable,
    Report,
    ReportStatus,
    TeamAllowance,
)
from ledger.report_pages import report_links
from ledger.selectors import team_budget as budget_selectors
from ledger.services import team_budget as budget_services
from ledger.templatetags.ledger_links import campaign_reports_url

# --- Links the campaign admin can show ------------------------------------------------------


def campaign_reports_link(campaign: Campaign) -> str:
    """An HTML link to the campaign's closing reports, for a message."""
    return format_html(
        '<a href="{}">Closing reports of “{}”</a>', campaign_reports_url(campaign), campaign
    )


# --- Ledger entries -------------------------------------------------------------------------


class LedgerEntryForm(forms.ModelForm[LedgerEntry]):
    """Add a plain entry, or a reversal by naming only the entry it undoes."""

    class Meta:
        model = LedgerEntry
        fields = ["campaign", "reverses", "kind", "description", "amount", "currency"]
        help_texts = {
            "reverses": "To correct an entry, name it here and leave the rest: the reversal "
            "takes its kind and currency and negates its amount.",
        }

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # A reversal takes these from the entry it undoes; clean() asks for them otherwise.
        for name in ("kind", "description", "amount", "currency"):
            if name in self.fields:
                self.fields[name].required = False

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        campaign = data.get("campaign")
        if campaign is None:
            return data
        original = data.get("reverses")
        if original is not None:
            if original.campaign_id != campaign.pk:
                raise ValidationError({"reverses": "that entry is not in this campaign's ledger"})
            services.check_reversal(original)
        else:
            services.check_entry(
                campaign,
                kind=data.get("kind") or "",
                description=data.get("description") or "",
                amount=data.get("amount"),
                currency=data.get("currency") or "",
            )
        return data

    def _post_clean(self) -> None:
        # The model's own validation would ask a reversal for the fields it derives; the
        # domain checks in clean() are the rules here.
        pass


@admin.register(LedgerEntry)
class LedgerEntryAdmin(TeamScopedAdmin):
    team_path = "campaign__team"
    form = LedgerEntryForm
    list_display = [
        "id",
        "campaign",
        "kind",
        "description",
        "amount",
        "currency",
        "reverses",
        "created_by",
        "created_at",
    ]
    list_filter = ["kind", "currency"]
    search_fields = ["description", "campaign__title"]
    list_select_related = ["campaign", "reverses", "created_by"]

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> list[str]:
        if obj is not None:
            return [
                "campaign",
                "kind",
                "description",
                "amount",
                "currency",
                "reverses",
                "reservation",
                "created_by",
                "created_at",
            ]
        return []

    def get_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        if obj is not None:
            return self.get_readonly_fields(request, obj)
        return list(LedgerEntryForm.Meta.fields)

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        # Append-only: an existing entry is only ever read.
        return False

    def formfield_for_foreignkey(self, db_field: Any, request: HttpRequest, **kwargs: Any) -> Any:
        # Only the caller's own objects are offered, and another team's id is refused with the
        # same words as a missing one. (A raw-id widget would render any row's label.)
        if db_field.name == "campaign":
            kwargs["queryset"] = Campaign.objects.for_user(request.user, write=True)
        if db_field.name == "reverses":
            kwargs["queryset"] = LedgerEntry.objects.filter(
                campaign__in=Campaign.objects.for_user(request.user, write=True),
                reverses__isnull=True,
                reversed_by__isnull=True,
            ).select_related("campaign")
        return super().formfield_for_foreignkey(db_field, request, **kwargs)

    def save_model(self, request: HttpRequest, obj: Any, form: Any, change: bool) -> None:
        if change:
            raise LedgerImmutable("ledger entries are append-only")
        data = form.cleaned_data
        campaign = data["campaign"]
        if not Membership.objects.can_write(request.user, campaign.team_id):
            raise Http404("No such campaign.")
        if data.get("reverses") is not None:
            entry = services.reverse_entry(
                campaign=campaign,
                entry_id=data["reverses"].pk,
                description=data.get("description") or "",
                user=request.user,
            )
        else:
            entry = services.post_entry(
                campaign=campaign,
                kind=data["kind"],
                description=data["description"],
                amount=data["amount"],
                currency=data["currency"],
                user=request.user,
            )
        # The admin goes on with `obj` (log entry, redirect): give it the row that was written.
        obj.__dict__.update({k: v for k, v in entry.__dict__.items() if k != "_state"})
        obj._state = entry._state


# --- Deliverables -----------------------------------------------------------------------------


class DeliverableFileInline(admin.TabularInline[DeliverableFile, Deliverable]):
    model = DeliverableFile
    fields = readonly_fields = ("path", "size_bytes", "sha256")
    extra = 0
    can_delete = False

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return True


class CheckedSelect(forms.NullBooleanSelect):
    """Yes / no / not checked: a check nobody ran is not a pass (docs/domain.md §14)."""

    def __init__(self, attrs: Any = None) -> None:
        super().__init__(attrs)
        self.choices = [("unknown", "not checked"), ("true", "yes"), ("false", "no")]


class DeliverableSubmitForm(forms.ModelForm[Deliverable]):
    """Submit a deliverable from the admin: the same `ledger.services.submit_deliverable` the API
    calls, so the server's checks decide acceptance; a refusal (no such run, a file without its
    size and digest, a closed campaign) is shown beside its field by the admin's refusal
    mechanism (campaigns/admin/refusals.py) and nothing is stored."""

    run = forms.CharField(
        required=False,
        max_length=200,
        label="Run id",
        help_text="The run that produced it (optional): a run id of this campaign.",
    )
    # Named as the API and the service name it, so a refusal lands beside it; the form metaclass
    # takes declared fields off the class, so the form's uploaded `files` stay untouched.
    files = forms.CharField(  # type: ignore[assignment]
        required=False,
        widget=forms.Textarea(attrs={"rows": 3, "cols": 80}),
        help_text="One file a line: path, size in bytes, sha256, separated by spaces. A file the "
        "run logged as an artifact may be named by its path alone.",
    )

    class Meta:
        model = Deliverable
        fields = [
            "campaign",
            "kind",
            "corpus_name",
            "corpus_revision",
            "expected_ids_ok",
            "reload_verified",
            "base_revision",
        ]
        widgets = {"expected_ids_ok": CheckedSelect, "reload_verified": CheckedSelect}
        labels = {"expected_ids_ok": "expected identifiers present"}
        help_texts = {
            "expected_ids_ok": "Predictions, artifacts, adapters: every expected identifier is "
            "present and none is unexpected. A note (error analysis) has none.",
            "reload_verified": "The files were reloaded in a new process. A note needs no reload.",
            "base_revision": "Adapters: the exact revision of the base model.",
        }

    def clean_files(self) -> list[dict[str, Any]]:
        listed = []
        for number, line in enumerate(self.cleaned_data.get("files", "").splitlines(), 1):
            parts = line.split()
            if not parts:
                continue
            if len(parts) not in (1, 3):
                raise ValidationError(
                    f"line {number}: a path alone, or a path, its size in bytes and its sha256"
                )
            if len(parts) == 1:
                listed.append({"path": parts[0]})
                continue
            path, size, digest = parts
            try:
                size_bytes = int(size)
            except ValueError:
                raise ValidationError(
                    f"line {number}: the size of {path} is a whole number of bytes, not {size!r}"
                ) from None
            if abs(size_bytes) >= 2**63:
                raise ValidationError(f"line {number}: {size} bytes is beyond any file's size")
            listed.append({"path": path, "size_bytes": size_bytes, "sha256": digest})
        return listed

    def _post_clean(self) -> None:
        # Nothing is built from the form: the service checks and writes the row and its files.
        pass


class DeliverableAdmin(TeamScopedAdmin):
    """Deliverables, read-only once stored (the verdict is the server's); submitted from the
    campaign page ("Submit a deliverable", `ledger_links`) or the API."""

    team_path = "campaign__team"
    form = DeliverableSubmitForm
    list_display = ["id", "campaign", "kind", "corpus", "run", "accepted", "created_at"]
    list_filter = ["accepted", "kind"]
    search_fields = ["corpus_name", "corpus_revision", "campaign__title", "run__run_id"]
    list_select_related = ["campaign", "run"]
    stored_fields = (
        "campaign",
        "kind",
        "corpus_name",
        "corpus_revision",
        "run",
        "expected_ids_ok",
        "reload_verified",
        "base_revision",
        "accepted",
        "reasons",
        "submitted_by",
        "created_at",
    )
    add_fieldsets = (
        (None, {"fields": ("campaign", "kind", ("corpus_name", "corpus_revision"), "run")}),
        ("Files (the artifact references)", {"fields": ("files",)}),
        (
            "Acceptance checks",
            {"fields": ("expected_ids_ok", "reload_verified", "base_revision")},
        ),
    )
    inlines = [DeliverableFileInline]

    def get_fieldsets(self, request: HttpRequest, obj: Any = None) -> Any:
        if obj is None:
            return self.add_fieldsets
        return [(None, {"fields": self.stored_fields})]

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        return () if obj is None else self.stored_fields

    def get_inlines(self, request: HttpRequest, obj: Any = None) -> Any:
        return [] if obj is None else self.inlines

    def get_form(
        self, request: HttpRequest, obj: Any = None, change: bool = False, **kwargs: Any
    ) -> Any:
        if obj is not None:
            # The stored row is only read: no form fields, the model's own.
            kwargs["form"] = forms.ModelForm
        return super().get_form(request, obj, change=change, **kwargs)

    def get_changeform_initial_data(self, request: HttpRequest) -> dict[str, Any]:
        initial: dict[str, Any] = super().get_changeform_initial_data(request)
        campaign = self._open_campaigns(request).filter(pk=initial.get("campaign") or 0).first()
        if campaign is not None:
            # The campaign's corpus is the usual one: typed once, on the plan.
            initial.setdefault("corpus_name", campaign.corpus_name)
            initial.setdefault("corpus_revision", campaign.corpus_revision)
        return initial

    def _open_campaigns(self, request: HttpRequest) -> QuerySet[Campaign]:
        return Campaign.objects.for_user(request.user, write=True).exclude(status="closed")

    def formfield_for_foreignkey(self, db_field: Any, request: HttpRequest, **kwargs: Any) -> Any:
        if db_field.name == "campaign":
            kwargs["queryset"] = self._open_campaigns(request)
        return super().formfield_for_foreignkey(db_field, request, **kwargs)

    def formfield_for_dbfield(self, db_field: Any, request: HttpRequest, **kwargs: Any) -> Any:
        field = super().formfield_for_dbfield(db_field, request, **kwargs)
        if field is not None and db_field.name == "campaign":
            # A deliverable names a campaign that exists: no add/change/view icons beside it
            # (the admin's wrapper, put on after formfield_for_foreignkey).
            for name in ("can_add_related", "can_change_related", "can_view_related"):
                setattr(field.widget, name, False)
        return field

    @admin.display(description="corpus")
    def corpus(self, obj: Deliverable) -> str:
        return f"{obj.corpus_name}@{obj.corpus_revision}"

    @admin.display(description="rejection reasons")
    def reasons(self, obj: Deliverable) -> str:
        if not obj.rejection_reasons:
            return "—"
        return format_html(
            "<ul>{}</ul>",
            format_html_join("", "<li>{}</li>", ((r,) for r in obj.rejection_reasons)),
        )

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False  # the verdict is the server's: a correction is a new submission

    def save_model(self, request: HttpRequest, obj: Any, form: Any, change: bool) -> None:
        data = form.cleaned_data
        campaign = data["campaign"]
        if not Membership.objects.can_write(request.user, campaign.team_id):
            raise Http404("No such campaign.")
        stored = services.submit_deliverable(
            campaign=campaign,
            kind=data["kind"],
            corpus_name=data["corpus_name"],
            corpus_revision=data["corpus_revision"],
            files=data["files"],
            run_id=data.get("run") or None,
            expected_ids_ok=data.get("expected_ids_ok"),
            reload_verified=data.get("reload_verified"),
            base_revision=data.get("base_revision") or "",
            user=request.user,
        )
        # The admin goes on with `obj` (log entry, redirect): give it the row that was written.
        obj.__dict__.update({k: v for k, v in stored.__dict__.items() if k != "_state"})
        obj._state = stored._state

    def response_add(self, request: HttpRequest, obj: Any, post_url_continue: Any = None) -> Any:
        # The verdict is what the planner came for: the stored deliverable with its checks.
        back = reverse("admin:campaigns_campaign_change", args=[obj.campaign_id])
        if obj.accepted:
            self.message_user(
                request,
                format_html(
                    "Deliverable #{} is accepted: it counts in the cost per accepted deliverable. "
                    '<a href="{}">Back to the campaign</a>',
                    obj.pk,
                    back,
                ),
                messages.SUCCESS,
            )
        else:
            self.message_user(
                request,
                format_html(
                    "Deliverable #{} is stored as rejected: {}. "
                    '<a href="{}">Back to the campaign</a>',
                    obj.pk,
                    "; ".join(obj.rejection_reasons),
                    back,
                ),
                messages.WARNING,
            )
        return HttpResponseRedirect(reverse("admin:ledger_deliverable_change", args=[obj.pk]))

    def lookup_allowed(self, lookup: str, value: str, request: HttpRequest | None = None) -> bool:
        # The campaign page links to its own deliverables; the queryset is already team-scoped.
        if lookup == "campaign__id__exact":
            return True
        return super().lookup_allowed(lookup, value, request)


admin.site.register(Deliverable, DeliverableAdmin)


# --- Closing reports ----------------------------------------------------------------------------


@admin.register(Report)
class ReportAdmin(TeamScopedAdmin):
    team_path = "campaign__team"
    # Few columns: beside the filter, at 1366 px, the download links must show without
    # scrolling the table sideways (who asked and when stay on the report's own page).
    list_display = ["id", "campaign", "status", "finished_at", "up_to_date", "downloads"]
    actions = ["regenerate"]
    list_filter = ["status"]
    list_select_related = ["campaign", "requested_by"]
    search_fields = ["campaign__title"]
    fields = readonly_fields = (
        "campaign",
        "status",
        "requested_by",
        "created_at",
        "started_at",
        "finished_at",
        "error",
        "downloads",
    )

    def get_queryset(self, request: HttpRequest) -> QuerySet[Any]:
        # The renderings can be large; the list and the page only need the links.
        return super().get_queryset(request).defer("html", "markdown", "data")

    @admin.display(description="download")
    def downloads(self, obj: Report) -> str:
        return report_links(obj)

    @admin.display(description="up to date")
    def up_to_date(self, obj: Report) -> str:
        return "out of date: generated before the close" if obj.out_of_date else "yes"

    @admin.action(description="Generate the selected reports' campaigns' reports again")
    def regenerate(self, request: HttpRequest, queryset: QuerySet[Any]) -> None:
        for campaign in {r.campaign for r in queryset.select_related("campaign")}:
            if not Membership.objects.can_write(request.user, campaign.team_id):
                messages.error(request, f"“{campaign}”: viewers cannot generate reports.")
                continue
            services.request_report(campaign=campaign, user=request.user)
            messages.success(request, f"“{campaign}”: a new closing report is being generated.")

    def lookup_allowed(self, lookup: str, value: str, request: HttpRequest | None = None) -> bool:
        # campaign_reports_url() filters by campaign; the queryset is already team-scoped.
        if lookup == "campaign__id__exact":
            return True
        return super().lookup_allowed(lookup, value, request)

    def has_add_permission(self, request: HttpRequest, *args: Any) -> bool:
        return False  # requested from the campaign page's action or the API (services)

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def get_urls(self) -> list[Any]:
        return [
            path(
                "<path:object_id>/download/<str:rendering>/",
                self.admin_site.admin_view(self.download_view),
                name="ledger_report_download",
            ),
            *super().get_urls(),
        ]

    def download_view(self, request: HttpRequest, object_id: str, rendering: str) -> HttpResponse:
        report = (
            super().get_queryset(request).filter(pk=object_id).first()
            if object_id.isdigit()
            else None
        )
        if report is None or rendering not in RENDERINGS:
            raise Http404("No such report.")
        if report.status != ReportStatus.READY:
            raise Http404("This report is not ready yet.")
        return report_download(report, rendering)


# --- The campaign page, extended by the ledger ---------------------------------------------------


class CampaignAdmin(campaigns_admin.CampaignAdmin):
    """The campaigns app's campaign page plus what the ledger adds to it: the "Generate closing
    report" action. The ledger sits above the campaigns app, so it extends the page rather than
    the page importing the ledger (docs/domain.md §17)."""

    actions = [
        *campaigns_admin.CampaignAdmin.actions,
        "generate_closing_report",
        "plan_next_campaign",
    ]

    def get_urls(self) -> list[Any]:
        # The page's own buttons for the two actions (ledger_links.ledger_campaign_tools).
        return [
            path(
                "<path:object_id>/plan-next/",
                self.admin_site.admin_view(self.plan_next_view),
                name="campaigns_campaign_plan_next",
            ),
            path(
                "<path:object_id>/closing-report/",
                self.admin_site.admin_view(self.closing_report_view),
                name="campaigns_campaign_closing_report",
            ),
            *super().get_urls(),
        ]

    def _page_action(self, request: HttpRequest, object_id: str, action: Any) -> HttpResponse:
        """Run a list action on this one campaign from its page's button (POST; the action
        itself refuses viewers with its message, as from the list)."""
        campaign = self._campaign_for(request, object_id, READERS)
        if request.method == "POST":
            try:
                with transaction.atomic():
                    action(request, Campaign.objects.filter(pk=campaign.pk))
            except REFUSALS as exc:  # as the list's actions show a refusal
                messages.error(request, text_of(exc))
        return HttpResponseRedirect(reverse("admin:campaigns_campaign_change", args=[object_id]))

    def plan_next_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        return self._page_action(request, object_id, self.plan_next_campaign)

    def closing_report_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        return self._page_action(request, object_id, self.generate_closing_report)

    @admin.action(description="Plan the next campaign from this one")
    def plan_next_campaign(self, request: HttpRequest, queryset: QuerySet[Any]) -> None:
        for campaign in queryset:
            if not Membership.objects.can_write(request.user, campaign.team_id):
                messages.error(request, f"“{campaign}”: viewers cannot plan a campaign.")
                continue
            clone = services.plan_next_campaign(campaign=campaign, user=request.user)
            messages.success(
                request,
                format_html(
                    "“{}” is planned from “{}”, with {} inherited uncertainties: "
                    '<a href="{}">open the draft</a>',
                    clone,
                    campaign,
                    len(clone.inherited_uncertainties),
                    reverse("admin:campaigns_campaign_change", args=[clone.pk]),
                ),
            )

    @admin.action(description="Generate closing report")
    def generate_closing_report(self, request: HttpRequest, queryset: QuerySet[Any]) -> None:
        for campaign in queryset:
            if not Membership.objects.can_write(request.user, campaign.team_id):
                messages.error(request, f"“{campaign}”: viewers cannot start a report.")
                continue
            services.request_report(campaign=campaign, user=request.user)
            messages.success(
                request,
                format_html(
                    "A closing report of “{}” is being built: {}",
                    campaign,
                    campaign_reports_link(campaign),
                ),
            )

    def _commit(self, request: HttpRequest, campaign: Campaign) -> bool:
        """The campaigns page's commit, plus the team budget's refusal (docs/domain.md §22):
        the confirmation page carries the acknowledgement as `over_team_budget=yes`."""
        acknowledged = request.POST.get("over_team_budget") == "yes"
        try:
            commit_plan(
                campaign=campaign,
                acting_user=real_user(request.user),
                over_team_budget=acknowledged,
            )
        except CommitOverTeamBudget as exc:
            request.over_team_budget_refused = True  # type: ignore[attr-defined]
            messages.error(
                request,
                f"“{campaign}” was not committed: it would take the team over its budget: "
                f"{'; '.join(exc.problems)}. Tick the acknowledgement on the commit page to "
                "commit anyway.",
            )
            return False
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

    def commit_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        """The campaigns confirmation page, told what the commit would do to the team budget."""
        response = super().commit_view(request, object_id)
        if getattr(request, "over_team_budget_refused", False):
            # The refusal is a message; show the page again, now with the acknowledgement.
            return HttpResponseRedirect(request.path)
        if isinstance(response, TemplateResponse) and response.context_data is not None:
            campaign = response.context_data["campaign"]
            response.context_data["over_team_budget"] = budget_selectors.commit_preview(campaign)
        return response


# --- Team allowances (docs/domain.md §22) ---------------------------------------------------


class TeamAllowanceForm(forms.ModelForm[TeamAllowance]):
    class Meta:
        model = TeamAllowance
        fields = [
            "team",
            "period_kind",
            "period_start",
            "amount",
            "currency",
            "gpu_hours",
            "gpu_model",
        ]


@admin.register(TeamAllowance)
class TeamAllowanceAdmin(TeamScopedAdmin):
    """Owners state the team's allowance per month or quarter; `ledger.services` writes it."""

    form = TeamAllowanceForm
    list_display = ["team", "period", "amount", "currency", "gpu_hours", "gpu_model"]
    # Only the teams of the rows the caller may see (get_queryset): the plain filter listed
    # every team's name to any member.
    list_filter = ["period_kind", ("team", admin.RelatedOnlyFieldListFilter)]
    search_fields = ["team__name", "gpu_model"]

    @admin.display(description="period")
    def period(self, obj: TeamAllowance) -> str:
        from ledger.domain.team_budget import period_label

        return period_label(obj.period_kind, obj.period_start)  # type: ignore[arg-type]

    def formfield_for_foreignkey(self, db_field: Any, request: HttpRequest, **kwargs: Any) -> Any:
        if db_field.name == "team" and not request.user.is_superuser:
            from campaigns.models import Team

            kwargs["queryset"] = Team.objects.filter(
                pk__in=Membership.objects.of(request.user)
                .filter(role="owner")
                .values_list("team_id", flat=True)
            )
        return super().formfield_for_foreignkey(db_field, request, **kwargs)

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        if obj is None or request.user.is_superuser:
            return super().has_change_permission(request, obj)
        return Membership.objects.has_role(request.user, obj.team_id, {"owner"})

    def save_model(self, request: HttpRequest, obj: Any, form: Any, change: bool) -> None:
        data = form.cleaned_data
        if not Membership.objects.has_role(request.user, data["team"].pk, {"owner"}):
            raise Http404("Only the team's owners state its allowances.")
        saved = budget_services.set_allowance(user=request.user, **data)
        obj.pk = saved.pk


admin.site.unregister(Campaign)
admin.site.register(Campaign, CampaignAdmin)

from ledger import share_admin as _share_admin  # noqa: E402,F401  (registers the shares' pages)
from ledger import team_admin as _team_admin  # noqa: E402,F401  (registers the team page's extension)
