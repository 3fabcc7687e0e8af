"""Closing reports in the browser (docs/domain.md §16.4): a team member opens a ready report at
``/reports/<id>/`` (signed in, a member of its campaign's team, else 404), and someone outside
the team opens a shared copy at ``/shared/reports/<token>/`` without signing in, while the link
is neither revoked nor expired (checked on every open: ledger/selectors/report_shares.py). Both
serve the stored HTML rendering, which runs nothing and loads nothing (its own CSP)."""

from __future__ import annotations

import re

from django.http import Http404, HttpRequest, HttpResponse
from django.urls import reverse
from django.utils import timezone
from django.utils.html import escape, format_html, format_html_join

from campaigns.models import Membership, Role
from ledger.api.views import RENDERINGS, report_download
from ledger.models import Report, ReportStatus
from ledger.selectors.report_shares import open_share

_READERS: set[str] = {Role.VIEWER, Role.PLANNER, Role.OWNER}


def report_links(report: Report) -> str:
    """The report list's links: open it here, download each rendering, share it."""
    if report.status != ReportStatus.READY:
        return "—"
    links = [(reverse("report-page", args=[report.pk]), "open")]
    links += [
        (reverse("admin:ledger_report_download", args=[report.pk, rendering]), rendering)
        for rendering in RENDERINGS
    ]
    links.append((reverse("admin:ledger_reportshare_add") + f"?report={report.pk}", "share"))
    return format_html_join(" · ", '<a href="{}">{}</a>', links)


def _inline(report: Report, banner: str) -> HttpResponse:
    """The stored HTML shown in the browser with ``banner`` on top (not a download)."""
    response = report_download(report, "html")
    content = response.content.decode()
    body = re.search(r"<body[^>]*>", content)
    at = body.end() if body else 0
    response.content = (content[:at] + banner + content[at:]).encode()
    response["Content-Disposition"] = "inline"
    response["Cache-Control"] = "private, no-store"
    response["Referrer-Policy"] = "no-referrer"
    response["X-Robots-Tag"] = "noindex"
    return response


def report_page(request: HttpRequest, pk: int) -> HttpResponse:
    """A team member's view of a ready report (the admin's sign-in in front)."""
    report = Report.objects.select_related("campaign").filter(pk=pk).first()
    readable = report is not None and (
        request.user.is_superuser
        or Membership.objects.has_role(request.user, report.campaign.team_id, _READERS)
    )
    if report is None or not readable or report.status != ReportStatus.READY:
        raise Http404("No such report.")
    back = reverse("admin:ledger_report_changelist") + f"?campaign__id__exact={report.campaign_id}"
    banner = format_html(
        '<p id="report-banner" style="font:14px sans-serif;background:#eef3f7;padding:8px">'
        'Closing report of “{}”. <a href="{}">All its reports, downloads and shares</a></p>',
        report.campaign.title,
        back,
    )
    return _inline(report, banner)


def shared_report_page(request: HttpRequest, token: str) -> HttpResponse:
    """The shared copy, signed out: 404 for a link that is not one, 410 once revoked or
    expired, with the reason in words."""
    opened = open_share(token, timezone.now())
    if opened.share is None:
        return _refused(404, opened.refusal)
    if opened.refusal:
        return _refused(410, opened.refusal)
    share = opened.share
    by = share.created_by.get_username() if share.created_by else "its team"
    banner = format_html(
        '<p id="shared-banner" style="font:14px sans-serif;background:#eef3f7;padding:8px">'
        "A read-only copy shared by {}; the link works until {} UTC.</p>",
        by,
        f"{share.expires_at:%Y-%m-%d %H:%M}",
    )
    return _inline(share.report, banner)


def _refused(status: int, words: str) -> HttpResponse:
    page = (
        "<!doctype html><html><head><meta charset='utf-8'><title>Campaign Desk</title></head>"
        f"<body><h1>Campaign Desk</h1><p id='share-refused'>{escape(words)}</p></body></html>"
    )
    response = HttpResponse(page, status=status)
    response["Cache-Control"] = "no-store"
    response["Referrer-Policy"] = "no-referrer"
    return response
