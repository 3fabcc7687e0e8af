"""A planner stops a running run from its admin page, with a reason and the rule's grace; the
training loop's client sees the stop at its next log call (issue 33 item 3)."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.test import TestCase

from campaign_desk_client import CampaignDesk, RunStopped
from campaigns.models import PlannedItem, Run, StopRule, Team
from campaigns.tests.factories import committed_campaign, ingest_client, ingest_key, make_user
from tests.browser import MISSING, BrowserTestCase

BUILD = Path(__file__).resolve().parent.parent / "build"


@pytest.mark.browser
@pytest.mark.skipif(MISSING is not None, reason=MISSING or "")
class StopARunFromItsPage(BrowserTestCase):
    implicit_wait = 5

    def setUp(self) -> None:
        team = Team.objects.create(name="nlp")
        make_user("pia", team=team, role="planner", password="pw-pia")
        make_user("vic", team=team, role="viewer", password="pw-vic")
        self.campaign = committed_campaign(team)
        self.rule = StopRule.objects.get(campaign=self.campaign)
        StopRule.objects.filter(pk=self.rule.pk).update(grace_steps=0, grace_minutes=0)
        self.desk = CampaignDesk(self.live_server_url, ingest_key(self.campaign))
        item = PlannedItem.objects.get(campaign=self.campaign, name="baseline")
        self.loop = self.desk.run(
            campaign=self.campaign.pk, run_id="r-stop", variant=item.pk, flush_points=1
        )
        self.loop.log(1, loss=2.5)

    def test_a_planner_stops_the_run_and_the_clients_next_log_raises(self) -> None:
        from selenium.webdriver.common.by import By

        b = self.browser
        run = Run.objects.get(run_id="r-stop")
        self.log_in("pia")
        b.get(f"{self.live_server_url}/admin/campaigns/run/{run.pk}/change/")
        BUILD.mkdir(exist_ok=True)
        b.save_screenshot(str(BUILD / "i33-stop-button.png"))
        self.follow(b.find_element(By.ID, "stop-run"))
        self.assertIn("Stop run r-stop?", b.find_element(By.TAG_NAME, "h1").text)
        # The browser asks for a reason; blanks are refused by the server, naming the field.
        reason = b.find_element(By.NAME, "reason")
        self.assertEqual(reason.get_attribute("required"), "true")
        self.fill("reason", "   ")
        self.follow(b.find_element(By.ID, "confirm-stop"))
        self.assertIn("This field is required.", b.find_element(By.ID, "stop-form").text)
        run.refresh_from_db()
        self.assertEqual(run.status, "running")
        rule_option = b.find_element(
            By.CSS_SELECTOR, f"select[name=rule] option[value='{self.rule.pk}']"
        )
        self.assertIn("grace: no grace", rule_option.text)
        self.fill("reason", "loss plateaued at 2.5 since step 1")
        self.select("rule", str(self.rule.pk))
        self.no_horizontal_scroll("the stop page")
        b.save_screenshot(str(BUILD / "i33-stop-form.png"))
        self.follow(b.find_element(By.ID, "confirm-stop"))
        self.assertIn("Run r-stop is stopped", self.message_after_click("is stopped"))
        self.assertEqual(b.find_elements(By.ID, "stop-run"), [])
        b.save_screenshot(str(BUILD / "i33-stopped-run.png"))
        run.refresh_from_db()
        self.assertEqual((run.status, run.stop_rule_id), ("stopped", self.rule.pk))
        self.assertEqual(run.stop_reason, "loss plateaued at 2.5 since step 1")

        with self.assertRaises(RunStopped) as stopped:
            self.loop.log(2, loss=2.4)
        self.assertEqual(stopped.exception.rule, self.rule.pk)
        self.assertIn("loss plateaued", stopped.exception.reason)
        self.assertTrue(self.loop.stopped)

    def test_a_viewer_has_no_stop_button_and_its_address_is_not_found(self) -> None:
        from selenium.webdriver.common.by import By

        run = Run.objects.get(run_id="r-stop")
        self.log_in("vic")
        self.browser.get(f"{self.live_server_url}/admin/campaigns/run/{run.pk}/change/")
        self.assertEqual(self.browser.find_elements(By.ID, "stop-run"), [])
        self.browser.get(f"{self.live_server_url}/admin/campaigns/run/{run.pk}/stop/")
        self.assertIn("Not Found", self.browser.page_source)
        run.refresh_from_db()
        self.assertEqual(run.status, "running")


class StopWithTheRulesGrace(TestCase):
    """The admin's stop through Django's test client: a rule with a grace lets the loop write on
    (docs/domain.md §4.6), and the page says so."""

    def test_a_stop_naming_a_rule_with_a_grace_keeps_that_grace(self) -> None:
        from django.test import Client

        team = Team.objects.create(name="nlp")
        planner = make_user("pia", team=team, role="planner")
        campaign = committed_campaign(team)
        rule = StopRule.objects.get(campaign=campaign)
        StopRule.objects.filter(pk=rule.pk).update(grace_steps=100)
        loop = ingest_client(campaign)
        loop.post(f"/api/v1/campaigns/{campaign.pk}/runs/", {"run_id": "r"}, format="json")
        run = Run.objects.get(run_id="r")
        browser = Client()
        browser.force_login(planner)
        answer = browser.post(
            f"/admin/campaigns/run/{run.pk}/stop/",
            {"reason": "out of time", "rule": str(rule.pk)},
            follow=True,
        )
        self.assertContains(answer, "its rule&#x27;s grace (100 steps)")
        points = {"points": [{"name": "loss", "step": 50, "value": 1.0}]}
        within = loop.post("/api/v1/runs/r/metrics/", points, format="json")
        self.assertEqual(within.status_code, 201)
        self.assertEqual(within.json()["stop"]["grace_until_step"], 100)
        points["points"][0]["step"] = 101
        self.assertEqual(
            loop.post("/api/v1/runs/r/metrics/", points, format="json").status_code, 409
        )
        again = browser.get(f"/admin/campaigns/run/{run.pk}/stop/", follow=True)
        self.assertContains(again, "Run r is stopped by a rule.")
