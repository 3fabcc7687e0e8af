"""The campaign page, extended by the ledger: the "Generate closing report" and "Plan the next
campaign" actions, and the team-budget check before a commit. The ledger sits above the campaigns
app, so it extends the page rather than the page importing the ledger (docs/domain.md §17)."""

from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.db import transaction
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.html import format_html

from campaigns import admin as campaigns_admin
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
from ledger.admin.reports import campaign_reports_link
from ledger.selectors import team_budget as budget_selectors


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
            clone = services.plan_next_campaign(
                campaign=campaign, acting_user=real_user(request.user)
            )
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
            services.request_report(campaign=campaign, acting_user=real_user(request.user))
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


admin.site.unregister(Campaign)
admin.site.register(Campaign, CampaignAdmin)
