"""The portfolio page in headless Chromium at 1366×768: it fits the width (no horizontal
scroll) and the burn-down is drawn; the screenshot is kept as build/portfolio.png."""

from __future__ import annotations

import unittest
from decimal import Decimal
from pathlib import Path

import pytest
from django.conf import settings
from django.contrib.staticfiles.testing import StaticLiveServerTestCase
from django.utils import timezone

from campaigns.models import Team
from campaigns.tests.factories import make_campaign, make_user
from ledger.domain import team_budget as tb
from ledger.models import Deliverable, LedgerEntry
from ledger.services.team_budget import set_allowance
from tests.browser import CHROMEDRIVER, CHROMIUM, log_in, page_widths, start_chromium

BUILD = Path(settings.BASE_DIR) / "build"
QUESTION = (
    "Does the LoRA variant at rank 16 beat full fine-tuning of the 7B baseline on the support "
    "tickets corpus by at least one point of macro-F1, with the long inputs kept whole?"
)


@pytest.mark.browser
@unittest.skipUnless(CHROMIUM and CHROMEDRIVER, "needs headless Chromium and chromedriver")
class PortfolioInChromiumTests(StaticLiveServerTestCase):
    def setUp(self) -> None:
        team = Team.objects.create(name="nlp-desk")
        self.team = team
        make_user("lena", team=team, role="owner", password="pw-lena")
        start = tb.period_bounds("quarter", timezone.now().date())[0]
        set_allowance(team=team, period_kind="quarter", period_start=start.date(),
                      amount=Decimal("1500.00"), currency="USD")  # fmt: skip
        statuses = ["closed", "committed", "running", "committed", "draft", "closed"] * 2
        for n, status in enumerate(statuses):
            campaign = make_campaign(
                team, title=f"Campaign {n + 1}: LoRA r{8 * (n + 1)} vs full fine-tuning",
                question=QUESTION, status=status, budget=Decimal("400.00"),
                committed_at=None if status == "draft" else timezone.now(),
                conclusion="No variant reached the threshold; the baseline stays." if status ==
                "closed" else "",
            )  # fmt: skip
            if status != "draft":
                amount = Decimal(47 * (n % 4 + 1))
                LedgerEntry.objects.create(campaign=campaign, kind="rental", currency="USD",
                                           description="lot", amount=amount)  # fmt: skip
            if n % 3 == 0:
                Deliverable.objects.create(campaign=campaign, kind="predictions",
                                           corpus_name="tickets", corpus_revision="r1",
                                           accepted=True)  # fmt: skip

    def test_it_fits_1366_pixels(self) -> None:
        from selenium.webdriver.common.by import By

        browser = start_chromium(1366, 768)
        try:
            browser.set_page_load_timeout(60)
            log_in(browser, self.live_server_url, "lena", timeout=20)
            browser.get(f"{self.live_server_url}/admin/campaigns/team/{self.team.pk}/portfolio/")
            rows = browser.find_elements(By.CSS_SELECTOR, "#portfolio-table tr.portfolio-row")
            self.assertEqual(len(rows), 12)
            self.assertTrue(browser.find_element(By.CSS_SELECTOR, "#portfolio-chart svg"))
            widths = page_widths(browser)
            self.assertLessEqual(widths[0], widths[1], "the page scrolls sideways")
            BUILD.mkdir(exist_ok=True)
            browser.save_screenshot(str(BUILD / "portfolio.png"))
        finally:
            browser.quit()
