"""Links the ledger adds to the campaign page (templates/admin/campaigns/campaign/): the page
belongs to the campaigns app, which imports nothing from the ledger, so its template loads these."""

from __future__ import annotations

from typing import Any

from django import template
from django.middleware.csrf import get_token
from django.urls import reverse
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString

from campaigns.models import Campaign, Membership
from ledger.selectors.ledger_summary import deliverable_counts

register = template.Library()


def campaign_reports_url(campaign: Campaign) -> str:
    """The admin list of this campaign's closing reports."""
    return f"{reverse('admin:ledger_report_changelist')}?campaign__id__exact={campaign.pk}"


@register.simple_tag
def campaign_reports_link(campaign: Campaign, text: str = "closing reports") -> SafeString:
    return format_html(
        '<a href="{}" id="reports-link">{}</a>', campaign_reports_url(campaign), text
    )


def campaign_deliverables_url(campaign: Campaign) -> str:
    """The admin list of this campaign's deliverables."""
    return f"{reverse('admin:ledger_deliverable_changelist')}?campaign__id__exact={campaign.pk}"


def submit_deliverable_url(campaign: Campaign) -> str:
    """The deliverable form with this campaign (and its corpus) filled in."""
    return f"{reverse('admin:ledger_deliverable_add')}?campaign={campaign.pk}"


@register.simple_tag
def submit_deliverable_tool(campaign: Campaign, can_write: bool) -> SafeString:
    """The campaign page's object-tools entry: submit a deliverable of this campaign."""
    # A draft has no runs and nothing to deliver yet; a closed campaign takes no deliverable.
    if not can_write or campaign.is_draft or campaign.is_closed:
        return SafeString("")
    return format_html(
        '<li><a href="{}" class="historylink" id="submit-deliverable">'
        "Submit a deliverable</a></li>",
        submit_deliverable_url(campaign),
    )


@register.simple_tag
def campaign_deliverables_link(campaign: Campaign) -> SafeString:
    """ "deliverables: 1 accepted, 2 rejected", linked to their list (their checks, their
    rejection reasons)."""
    accepted, rejected = deliverable_counts(campaign)
    return format_html(
        '<a href="{}" id="deliverables-link">deliverables: {} accepted, {} rejected</a>',
        campaign_deliverables_url(campaign),
        accepted,
        rejected,
    )


_TOOL = (
    '<li><form method="post" action="{}" style="display:inline">'
    '<input type="hidden" name="csrfmiddlewaretoken" value="{}">'
    '<button type="submit" class="historylink" id="{}" style="border:0;cursor:pointer;margin:0">'
    "{}</button></form></li>"
)


@register.simple_tag(takes_context=True)
def ledger_campaign_tools(context: dict[str, Any], campaign: Campaign) -> SafeString:
    """The campaign page's buttons for what the ledger adds: generate the closing report (once
    runs exist) and plan the next campaign from this one (writers of the team only)."""
    request = context.get("request")
    if request is None or not Membership.objects.can_write(request.user, campaign.team_id):
        return SafeString("")
    token = get_token(request)
    tools = []
    if not campaign.is_draft:
        tools.append(("campaigns_campaign_closing_report", "generate-report", "Closing report"))
    tools.append(("campaigns_campaign_plan_next", "plan-next", "Plan the next campaign"))
    return format_html_join(
        "",
        _TOOL,
        (
            (reverse(f"admin:{name}", args=[campaign.pk]), token, id_, text)
            for name, id_, text in tools
        ),
    )
