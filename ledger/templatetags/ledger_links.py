"""Links the ledger adds to the campaign page (templates/admin/campaigns/campaign/): the page
belongs to the campaigns app, which imports nothing from the ledger, so its template loads these."""

from __future__ import annotations

from django import template
from django.urls import reverse
from django.utils.html import format_html
from django.utils.safestring import SafeString

from campaigns.models import Campaign

register = template.Library()


def campaign_reports_url(campaign: Campaign) -> str:
    """The admin list of this campaign's closing reports."""
    return f"{reverse('admin:ledger_report_changelist')}?campaign__id__exact={campaign.pk}"


@register.simple_tag
def campaign_reports_link(campaign: Campaign, text: str = "closing reports") -> SafeString:
    return format_html(
        '<a href="{}" id="reports-link">{}</a>', campaign_reports_url(campaign), text
    )
