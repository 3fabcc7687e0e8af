"""Looked at in headless Chromium at 1366×768 (issue 30): the seed's closing report, whose hours
are the timeline's (78.3 h as it ran, the cut stage's 0.5 h, the data and resume checks done,
the next plan's ratios), and the page of the campaign planned from it, which says where each
of its figures came from. Neither scrolls sideways; the screenshots are kept in build/
(report-timeline*.png, next-plan-*.png) for people to look at."""

from __future__ import annotations

import unittest
from pathlib import Path

import pytest
from django.conf import settings

from campaigns.models import Campaign, Team
from campaigns.tests.factories import as_user, celery_eager, make_user
from ledger import services as ledger_services
from ledger.tests.support import seed_campaign
from tests.browser import MISSING, BrowserTestCase

BUILD = Path(settings.BASE_DIR) / "build"


@pytest.mark.browser
@unittest.skipIf(MISSING, MISSING or "")
class TheSeedsReportAndItsNextPlanInChromium(BrowserTestCase):
    def setUp(self) -> None:
        team = Team.objects.create(name="nlp")
        self.user = make_user("lena", team=team, password="pw-lena")
        api = as_user(self.user)
        self.source = Campaign.objects.get(pk=seed_campaign(api)["id"])
        with celery_eager():
            self.report = ledger_services.request_report(
                campaign=self.source, acting_user=self.user
            )
        self.report.refresh_from_db()
        self.assertEqual(self.report.status, "ready", self.report.error)
        answer = api.post(f"/api/v1/campaigns/{self.source.pk}/clone/", {}, format="json")
        self.assertEqual(answer.status_code, 201, answer.content)
        self.clone = Campaign.objects.get(pk=answer.json()["id"])
        self.log_in("lena")

    def shot(self, name: str, sections: tuple[str, ...] = ()) -> None:
        """The first viewport at 1366×768, as a person sees it first, then the whole page and
        each of `sections` (element ids) whole."""
        from selenium.webdriver.common.by import By

        BUILD.mkdir(exist_ok=True)
        self.browser.save_screenshot(str(BUILD / f"{name}-viewport.png"))
        height = self.browser.execute_script("return document.documentElement.scrollHeight")
        self.browser.set_window_size(1366, min(int(height) + 40, 12000))
        self.browser.save_screenshot(str(BUILD / f"{name}.png"))
        for section in sections:
            element = self.browser.find_element(By.ID, section)
            element.screenshot(str(BUILD / f"{name}-{section}.png"))
        self.browser.set_window_size(*self.window)

    def test_the_report_tells_the_timelines_hours_and_fits_the_width(self) -> None:
        from selenium.webdriver.common.by import By

        self.browser.get(f"{self.live_server_url}/api/v1/reports/{self.report.pk}/html/")
        headline = self.browser.find_element(By.ID, "report-headline").text
        self.assertIn("78.3 h of a 72 h window", headline)
        self.assertEqual(self.browser.find_element(By.ID, "forecast-calendar").text, "78.30 h")
        self.assertIn("78.30 h", self.browser.find_element(By.ID, "observed-total").text)
        rows = {
            r.find_element(By.TAG_NAME, "td").text: r.text
            for r in self.browser.find_elements(By.CSS_SELECTOR, "#stage-hours tbody tr")
        }
        self.assertIn("cut", rows["Train variant B"])
        self.assertIn("0.50", rows["Train variant B"])
        items = self.browser.find_element(By.ID, "items").text
        self.assertIn("Check the data: 1.00 h typed", items)
        ratios = self.browser.find_element(By.ID, "kind-ratios").text
        for ratio in ("×6.00", "×5.00", "×2.09"):
            self.assertIn(ratio, ratios)
        self.assertEqual(
            len(self.browser.find_elements(By.CSS_SELECTOR, "#calendar-gantt rect.stage.cut")), 1
        )
        self.no_horizontal_scroll("the closing report")
        self.shot("report-timeline", ("hours", "items", "next-campaign"))

    def test_the_next_campaigns_page_says_where_each_figure_came_from(self) -> None:
        from selenium.webdriver.common.by import By

        self.browser.get(f"{self.live_server_url}/admin/campaigns/campaign/{self.clone.pk}/change/")
        inherited = self.browser.find_element(By.ID, "inherited-uncertainties").text
        self.assertIn("2.00 h planned before × 6.00 (this campaign: setup took ×6.00", inherited)
        self.assertIn("10.00 h planned before × 2.09", inherited)
        self.no_horizontal_scroll("the next campaign's page")
        self.shot("next-plan-page", ("money-panel",))
