"""The campaign's own admin pages beside its change page: commit the plan, close the campaign,
issue an ingest key, its hardware options and the comparison of its runs. A mixin of
CampaignAdmin (campaigns/admin/campaign.py), kept apart so the change page's module stays short;
every write goes through campaigns/services."""

from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import path, reverse

from campaigns.admin.campaign_pages import close_from_form, compared_runs, issued_keys_page
from campaigns.admin.forms import CloseCampaignForm
from campaigns.admin.tenancy import OWNERS, READERS, WRITERS, caller_has_role
from campaigns.models import Campaign, CommitRefused, PlanFrozen
from campaigns.services.campaigns import real_user
from campaigns.services.keys import issue_ingest_key
from campaigns.services.plans import commit_plan


class CampaignPageViews(admin.ModelAdmin[Any]):
    """The campaign's extra pages and the commit they share with the list's action."""

    def get_urls(self) -> list[Any]:
        return [
            path(
                "<path:object_id>/commit/",
                self.admin_site.admin_view(self.commit_view),
                name="campaigns_campaign_commit",
            ),
            path(
                "<path:object_id>/close/",
                self.admin_site.admin_view(self.close_view),
                name="campaigns_campaign_close",
            ),
            path(
                "<path:object_id>/ingest-key/",
                self.admin_site.admin_view(self.ingest_key_view),
                name="campaigns_campaign_ingest_key",
            ),
            path(
                "<path:object_id>/hardware/",
                self.admin_site.admin_view(self.hardware_view),
                name="campaigns_campaign_hardware",
            ),
            path(
                "<path:object_id>/compare/",
                self.admin_site.admin_view(self.compare_view),
                name="campaigns_campaign_compare",
            ),
            *super().get_urls(),
        ]

    def _campaign_for(self, request: HttpRequest, object_id: str, roles: Any) -> Campaign:
        """The campaign, if the caller holds one of ``roles`` in its team; else 404 (the same
        answer as a missing id, so another team's campaigns cannot be told apart)."""
        campaign: Campaign | None = self.get_object(request, object_id)
        if campaign is None or not caller_has_role(request, campaign.team_id, roles):
            raise Http404("No such campaign.")
        return campaign

    def _writable_campaign(self, request: HttpRequest, object_id: str) -> Campaign:
        return self._campaign_for(request, object_id, WRITERS)

    def _campaign_page(
        self, request: HttpRequest, campaign: Campaign, template: str, title: str, **extra: Any
    ) -> TemplateResponse:
        """One of the campaign's own admin pages (commit, close, compare, hardware): the admin's
        context, the campaign, its change page's address and what the page adds."""
        context = {
            **self.admin_site.each_context(request),
            "title": title,
            "campaign": campaign,
            "opts": self.model._meta,
            "change_url": reverse("admin:campaigns_campaign_change", args=[campaign.pk]),
            **extra,
        }
        return TemplateResponse(request, f"admin/campaigns/campaign/{template}", context)

    def commit_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        """The confirmation page: the plan's warnings and what commit freezes; commit only on
        its explicit second click (a POST carrying ``confirm``)."""
        campaign = self._writable_campaign(request, object_id)
        change_url = reverse("admin:campaigns_campaign_change", args=[object_id])
        if request.method == "POST" and request.POST.get("confirm") == "yes":
            self._commit(request, campaign)
            return HttpResponseRedirect(change_url)
        if not campaign.is_draft:
            messages.warning(request, f"“{campaign}” is already committed.")
            return HttpResponseRedirect(change_url)
        return self._campaign_page(
            request,
            campaign,
            "commit.html",
            f"Commit “{campaign}”?",
            problems=campaign.commit_problems(),
        )

    def compare_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        """Compare runs (``?metric=``; campaign_pages.compared_runs). Readers of the campaign's
        team only (else 404). Queries: the campaign, then those of compared_runs."""
        campaign = self._campaign_for(request, object_id, READERS)
        return self._campaign_page(
            request,
            campaign,
            "compare.html",
            f"Compare runs of “{campaign}”",
            **compared_runs(campaign, request.GET.get("metric")),
        )

    def ingest_key_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        """The campaign page's "Issue an ingest key" button (POST; owners): the key is shown
        once, on the page this POST answers (`issued_keys_page`), as the list's action does."""
        campaign = self._campaign_for(request, object_id, OWNERS)
        change_url = reverse("admin:campaigns_campaign_change", args=[object_id])
        if request.method != "POST":
            return HttpResponseRedirect(change_url)
        _key, raw = issue_ingest_key(campaign=campaign, acting_user=real_user(request.user))
        return issued_keys_page(self, request, [(campaign, raw)])

    def hardware_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        """Every hardware option of the campaign (the page's panel shows the first three)."""
        campaign = self._campaign_for(request, object_id, READERS)
        return self._campaign_page(
            request, campaign, "hardware.html", f"Hardware options of “{campaign}”"
        )

    def close_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        """Close the campaign with its conclusion: the same form as the API's close."""
        campaign = self._writable_campaign(request, object_id)
        change_url = reverse("admin:campaigns_campaign_change", args=[object_id])
        form = CloseCampaignForm(request.POST if request.method == "POST" else None)
        if (
            request.method == "POST"
            and form.is_valid()
            and close_from_form(form, campaign, request.user)
        ):
            messages.success(request, f"“{campaign}” is closed.")
            return HttpResponseRedirect(change_url)
        return self._campaign_page(
            request,
            campaign,
            "close.html",
            f"Close “{campaign}”",
            form=form,
            running_runs=list(
                campaign.runs.filter(status="running").values_list("run_id", flat=True)
            ),
        )

    def _commit(self, request: HttpRequest, campaign: Campaign) -> bool:
        try:
            commit_plan(campaign=campaign, acting_user=real_user(request.user))
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
