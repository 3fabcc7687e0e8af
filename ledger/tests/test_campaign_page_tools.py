"""The campaign page's own buttons for what the ledger adds (issue 18: no step needs the list's
actions or a shell): "Closing report" and "Plan the next campaign", for the team's writers."""

from __future__ import annotations

from django.test import TestCase
from django.urls import reverse

from campaigns.models import Campaign, Team
from campaigns.tests.factories import celery_eager, committed_campaign, make_plannable, make_user
from ledger.models import Report


class TheCampaignPagesLedgerButtons(TestCase):
    @classmethod
    def setUpTestData(cls) -> None:
        cls.team = Team.objects.create(name="nlp")
        cls.planner = make_user("pia", team=cls.team)
        cls.viewer = make_user("vic", team=cls.team, role="viewer")
        cls.campaign = committed_campaign(cls.team, cls.planner, title="Ours", lots=0)
        cls.theirs = committed_campaign(Team.objects.create(name="cv"), title="Theirs", lots=0)

    def page(self, campaign: Campaign) -> str:
        url = reverse("admin:campaigns_campaign_change", args=[campaign.pk])
        return self.client.get(url).content.decode()

    def test_a_writer_sees_both_buttons_and_a_draft_only_plan_next(self) -> None:
        self.client.force_login(self.planner)
        html = self.page(self.campaign)
        self.assertIn('id="generate-report"', html)
        self.assertIn('id="plan-next"', html)
        draft = self.page(make_plannable(self.team, title="A draft"))
        self.assertNotIn('id="generate-report"', draft)
        self.assertIn('id="plan-next"', draft)

    def test_plan_next_makes_the_draft_and_links_to_it(self) -> None:
        self.client.force_login(self.planner)
        url = reverse("admin:campaigns_campaign_plan_next", args=[self.campaign.pk])
        answer = self.client.post(url, follow=True)
        clone = Campaign.objects.exclude(pk__in=[self.campaign.pk, self.theirs.pk]).get()
        self.assertEqual(clone.status, "draft")
        self.assertContains(answer, reverse("admin:campaigns_campaign_change", args=[clone.pk]))

    def test_closing_report_requests_a_report_of_this_campaign(self) -> None:
        self.client.force_login(self.planner)
        url = reverse("admin:campaigns_campaign_closing_report", args=[self.campaign.pk])
        with celery_eager(), self.captureOnCommitCallbacks(execute=True):
            answer = self.client.post(url, follow=True)
        self.assertContains(answer, "is being built")
        self.assertEqual(Report.objects.get(campaign=self.campaign).status, "ready")

    def test_a_get_changes_nothing(self) -> None:
        self.client.force_login(self.planner)
        for name in ("campaigns_campaign_plan_next", "campaigns_campaign_closing_report"):
            self.client.get(reverse(f"admin:{name}", args=[self.campaign.pk]))
        self.assertEqual(Campaign.objects.count(), 2)
        self.assertFalse(Report.objects.exists())

    def test_a_viewer_has_no_buttons_and_cannot_post(self) -> None:
        self.client.force_login(self.viewer)
        html = self.page(self.campaign)
        self.assertNotIn('id="plan-next"', html)
        self.assertNotIn('id="generate-report"', html)
        url = reverse("admin:campaigns_campaign_plan_next", args=[self.campaign.pk])
        answer = self.client.post(url, follow=True)
        self.assertContains(answer, "viewers cannot plan a campaign")
        self.assertEqual(Campaign.objects.count(), 2)

    def test_another_teams_campaign_is_not_found(self) -> None:
        self.client.force_login(self.planner)
        url = reverse("admin:campaigns_campaign_plan_next", args=[self.theirs.pk])
        self.assertEqual(self.client.post(url).status_code, 404)
        self.assertEqual(Campaign.objects.count(), 2)
