"""No dead ends (issue 18, item 5): `/` opens the admin (the admin's "View site" too), MLflow's
"View run at …/mlflow/#/experiments/E/runs/R" reaches the run's page, and no admin link leads
to a raw API path ("13 more options" is an admin page)."""

from __future__ import annotations

import re

from django.test import TestCase
from django.urls import reverse

from campaigns.models import Team
from campaigns.tests.factories import committed_campaign, make_run, make_user


class LinksLeadSomewhere(TestCase):
    @classmethod
    def setUpTestData(cls) -> None:
        cls.team = Team.objects.create(name="nlp")
        cls.planner = make_user("pia", team=cls.team)
        cls.outsider = make_user("otto", team=Team.objects.create(name="vision"))
        cls.campaign = committed_campaign(cls.team)
        cls.logged = make_run(cls.campaign, "lora-r16-s1")

    def test_the_root_and_view_site_open_the_admin(self) -> None:
        answer = self.client.get("/")
        self.assertEqual((answer.status_code, answer["Location"]), (302, "/admin/"))

    def test_mlflows_view_run_link_reaches_the_runs_page(self) -> None:
        page = self.client.get("/mlflow/")
        self.assertEqual(page.status_code, 200)
        self.assertContains(page, "data-mlflow-landing")  # campaigns/static/campaigns/pages.js
        self.assertContains(page, '<script src="/static/campaigns/pages.js">')
        self.client.force_login(self.planner)
        answer = self.client.get("/runs/lora-r16-s1/")
        self.assertRedirects(answer, reverse("admin:campaigns_run_change", args=[self.logged.pk]))
        self.client.force_login(self.outsider)
        self.assertEqual(self.client.get("/runs/lora-r16-s1/").status_code, 404)

    def test_no_admin_link_leads_to_a_raw_api_path(self) -> None:
        self.client.force_login(self.planner)
        page = self.client.get(reverse("admin:campaigns_campaign_change", args=[self.campaign.pk]))
        hrefs = re.findall(r'href="([^"]+)"', page.content.decode())
        self.assertFalse([h for h in hrefs if h.startswith("/api/")], "links to raw API paths")
        more = reverse("admin:campaigns_campaign_hardware", args=[self.campaign.pk])
        answer = self.client.get(more)
        self.assertEqual(answer.status_code, 200)
        self.assertContains(answer, 'id="hardware-options-panel"')
        self.assertNotContains(answer, "more option")


class TheIngestKeyFromTheCampaignPage(TestCase):
    def test_an_owner_issues_a_key_with_one_click_and_sees_it_once(self) -> None:
        from campaigns.models import IngestKey

        team = Team.objects.create(name="nlp")
        owner = make_user("olga", team=team, role="owner")
        planner = make_user("pia", team=team)
        campaign = committed_campaign(team)
        page_url = reverse("admin:campaigns_campaign_change", args=[campaign.pk])
        url = reverse("admin:campaigns_campaign_ingest_key", args=[campaign.pk])
        self.client.force_login(planner)
        self.assertNotContains(self.client.get(page_url), 'id="issue-ingest-key"')
        self.assertEqual(self.client.post(url).status_code, 404)
        self.client.force_login(owner)
        self.assertContains(self.client.get(page_url), 'id="issue-ingest-key"')
        answer = self.client.post(url, follow=True)
        self.assertEqual(answer.status_code, 200)
        raw = max(re.findall(r"cdk_[A-Za-z0-9_-]+", answer.content.decode()), key=len)
        self.assertGreater(len(raw), 20)
        self.assertEqual(IngestKey.objects.filter(campaign=campaign).count(), 1)
        self.assertNotContains(self.client.get(page_url), raw)  # shown once
