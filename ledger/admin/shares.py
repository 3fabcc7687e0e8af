"""Shared closing reports in the admin (docs/domain.md §16.4): planners and owners share a ready
report of their team for a number of days (the link is on the share's page) and revoke links;
viewers see them. The writes are ledger/services/report_shares.py."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import ValidationError
from django.db.models import QuerySet
from django.http import HttpRequest
from django.urls import reverse
from django.utils.html import format_html

from campaigns.admin.service_rows import ServiceWrittenRows
from campaigns.admin.tenancy import WRITERS, TeamScopedAdmin, caller_has_role, caller_team_ids
from ledger.models import Report, ReportShare, ReportStatus
from ledger.services import report_shares


class ShareForm(forms.ModelForm[ReportShare]):
    days = forms.IntegerField(
        min_value=1,
        max_value=report_shares.MAX_DAYS,
        initial=7,
        help_text=f"Days the link works ({report_shares.MAX_DAYS} at most).",
    )

    class Meta:
        model = ReportShare
        fields = ["report", "note"]


@admin.register(ReportShare)
class ReportShareAdmin(ServiceWrittenRows, TeamScopedAdmin):
    team_path = "report__campaign__team"
    form = ShareForm
    list_display = ["id", "report", "note", "created_by", "expires_at", "state", "link"]
    list_select_related = ["report__campaign", "created_by"]
    actions = ["revoke"]
    readonly_fields = ["link", "state", "created_by", "created_at", "expires_at", "revoked_at"]

    def get_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        if obj is None:
            return ["report", "days", "note"]
        return ["report", "note", "link", "state", "created_by", "created_at", "expires_at"]

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        return self.readonly_fields if obj is None else [*self.readonly_fields, "report", "note"]

    def formfield_for_foreignkey(self, db_field: Any, request: HttpRequest, **kwargs: Any) -> Any:
        if db_field.name == "report":
            kwargs["queryset"] = Report.objects.filter(
                campaign__team_id__in=caller_team_ids(request, write=True),
                status=ReportStatus.READY,
            ).select_related("campaign")
        return super().formfield_for_foreignkey(db_field, request, **kwargs)

    def get_changeform_initial_data(self, request: HttpRequest) -> dict[str, Any]:
        return {"report": request.GET.get("report"), "days": 7}

    def write_row(self, request: HttpRequest, obj: Any, form: Any, change: bool) -> Any:
        data = form.cleaned_data
        if not caller_has_role(request, data["report"].campaign.team_id, WRITERS):
            raise ValidationError("Viewers cannot share reports.")
        share, _token = report_shares.share_report(
            report=data["report"], acting_user=request.user, days=data["days"], note=data["note"]
        )
        return share

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False  # a link is revoked, never edited

    @admin.display(description="link")
    def link(self, obj: ReportShare) -> str:
        path = reverse("shared-report", args=[report_shares.token_of(obj)])
        return format_html('<a href="{}" class="share-link">{}</a>', path, path)

    @admin.display(description="state")
    def state(self, obj: ReportShare) -> str:
        from django.utils import timezone

        if obj.revoked_at is not None:
            return f"revoked {obj.revoked_at:%Y-%m-%d %H:%M}"
        return "expired" if obj.expires_at <= timezone.now() else "open"

    @admin.action(description="Revoke the selected links")
    def revoke(self, request: HttpRequest, queryset: QuerySet[Any]) -> None:
        for share in queryset.select_related("report__campaign"):
            if not caller_has_role(request, share.report.campaign.team_id, WRITERS):
                messages.error(request, f"{share}: viewers cannot revoke links.")
                continue
            report_shares.revoke_share(share=share, acting_user=request.user)
            messages.success(request, f"{share} is revoked: its link no longer opens.")
