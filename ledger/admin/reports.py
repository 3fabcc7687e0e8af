"""Closing reports in the admin: built by the worker (`ledger.services.closing_reports`),
listed and downloaded here; the link the campaign admin shows to them."""

from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import Http404, HttpRequest, HttpResponse
from django.urls import path
from django.utils.html import format_html

from campaigns.admin import TeamScopedAdmin
from campaigns.models import (
    Campaign,
    Membership,
)
from campaigns.services.campaigns import real_user
from ledger import services
from ledger.api.views import RENDERINGS, report_download
from ledger.models import (
    Report,
    ReportStatus,
)
from ledger.templatetags.ledger_links import campaign_reports_url
from ledger.views.report_pages import report_links


def campaign_reports_link(campaign: Campaign) -> str:
    """An HTML link to the campaign's closing reports, for a message."""
    return format_html(
        '<a href="{}">Closing reports of “{}”</a>', campaign_reports_url(campaign), campaign
    )


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
            services.request_report(campaign=campaign, acting_user=real_user(request.user))
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
