"""Deliverables in the admin: submitted from the campaign page or here, through
`ledger.services.submit_deliverable` and its checks (as the API does); once stored only read."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import ValidationError
from django.db.models import QuerySet
from django.http import Http404, HttpRequest, HttpResponseRedirect
from django.urls import reverse
from django.utils.html import format_html, format_html_join

from campaigns.admin import TeamScopedAdmin
from campaigns.admin.service_rows import ServiceWrittenRows
from campaigns.models import (
    Campaign,
    Membership,
)
from campaigns.services.campaigns import real_user
from ledger import services
from ledger.models import (
    Deliverable,
    DeliverableFile,
)


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


class DeliverableAdmin(ServiceWrittenRows, TeamScopedAdmin):
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

    def write_row(self, request: HttpRequest, obj: Any, form: Any, change: bool) -> Any:
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
            acting_user=real_user(request.user),
        )
        return stored

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
