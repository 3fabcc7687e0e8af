"""A planner plans a small campaign through the admin in a real (headless) browser."""

from __future__ import annotations

from pathlib import Path

import pytest

from campaigns.models import Campaign, Team
from campaigns.tests.factories import make_user
from tests.browser import MISSING, BrowserTestCase

BUILD = Path(__file__).resolve().parent.parent / "build"


@pytest.mark.browser
@pytest.mark.skipif(MISSING is not None, reason=MISSING or "")
class PlanACampaignInTheAdmin(BrowserTestCase):
    window = (1400, 1000)
    implicit_wait = 5

    def setUp(self) -> None:
        self.team = Team.objects.create(name="nlp")
        make_user("pia", team=self.team, role="planner", password="pw-pia")

    def add_inline_row(self, prefix: str) -> None:
        from selenium.webdriver.common.by import By

        group = self.browser.find_element(By.ID, f"{prefix}-group")
        link = group.find_element(By.CSS_SELECTOR, ".add-row a")
        self.browser.execute_script("arguments[0].click();", link)

    def test_a_planner_logs_in_plans_commits_closes_and_sees_the_summary(self) -> None:
        from selenium.webdriver.common.by import By

        b = self.browser
        self.log_in("pia")
        b.get(f"{self.live_server_url}/admin/campaigns/campaign/add/")

        self.select("team", str(self.team.pk))
        self.fill("title", "Rank 16 or rank 64?")
        self.fill("question", "Does a LoRA variant beat the baseline by 1 F1?")
        self.fill("corpus_name", "tickets")
        self.fill("corpus_revision", "sha256:abc")
        self.fill("window_hours", "72")
        self.fill("budget", "47.14")

        self.add_inline_row("items")  # row 0 is there already: one empty row to start
        self.fill("items-0-name", "baseline")
        self.select("items-0-role", "baseline")
        self.select("items-0-tier", "mandatory")
        self.fill("items-0-planned_hours", "10")
        self.fill("items-1-name", "variant A")
        self.select("items-1-role", "variant")
        self.select("items-1-tier", "useful")
        self.fill("items-1-planned_hours", "12")
        self.fill("items-1-prep_hours", "2")

        self.select("stop_rules-0-kind", "non_finite_loss")
        self.fill("stop_rules-0-metric", "loss")

        b.find_element(By.NAME, "_continue").click()
        errors = b.find_elements(By.CSS_SELECTOR, ".errornote, .errorlist")
        self.assertEqual([e.text for e in errors], [])

        campaign = Campaign.objects.get(title="Rank 16 or rank 64?")
        self.assertEqual(campaign.items.count(), 2)
        self.assertEqual(campaign.stop_rules.get().kind, "non_finite_loss")
        headline = b.find_element(By.ID, "summary-headline").text
        self.assertEqual(headline, "The calendar takes 24 h of a 72 h window: 48 h to spare.")

        b.find_element(By.ID, "commit-plan").click()
        b.find_element(By.ID, "confirm-commit").click()
        self.assertIn("is committed", self.message_after_click("is committed"))
        self.assertIn("Committed", b.find_element(By.ID, "campaign-summary").text)
        self.assertIn("mandatory: 1", b.find_element(By.ID, "summary-tiers").text)
        campaign.refresh_from_db()
        self.assertEqual(campaign.status, "committed")
        self.assertEqual(campaign.baseline.snapshot["items"][1]["name"], "variant A")
        BUILD.mkdir(exist_ok=True)
        b.save_screenshot(str(BUILD / "admin-planned-campaign.png"))

        # Close it: the button on the page opens the close form, which needs a conclusion (the
        # browser will not send it blank; the server refuses a blank one too: test_close.py).
        b.find_element(By.ID, "close-campaign").click()
        self.assertIsNotNone(b.find_element(By.NAME, "conclusion").get_attribute("required"))
        self.fill("conclusion", "Neither variant beats the baseline: keep the baseline.")
        b.save_screenshot(str(BUILD / "admin-close-campaign.png"))
        b.find_element(By.ID, "confirm-close").click()
        self.assertIn("is closed", self.message_after_click("is closed"))
        summary = b.find_element(By.ID, "campaign-summary").text
        self.assertIn("Closed", summary)
        self.assertIn("by pia", summary)
        self.assertIn("Neither variant beats the baseline", summary)
        self.assertEqual(b.find_elements(By.ID, "close-campaign"), [])
        campaign.refresh_from_db()
        self.assertEqual(campaign.status, "closed")
        b.save_screenshot(str(BUILD / "admin-closed-campaign.png"))
