"""Links the ledger adds to the campaign page (templates/admin/campaigns/campaign/): the page
belongs to the campaigns app, which imports nothing from the ledger, so its template loads these."""

from __future__ import annotations

from django import template
from django.urls import reverse
from django.utils.html import format_html
from django.utils.safestring import SafeString

from campaigns.models import Campaign
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
        return format_html("")
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
