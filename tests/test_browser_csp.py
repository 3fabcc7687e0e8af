"""The Content-Security-Policy (config/settings.py) in a 1366×768 headless Chromium: the sign-in,
the campaign page with its Gantt, the run and compare pages with their uPlot charts, the
portfolio, the API docs (Swagger UI) and MLflow's "View run" landing all work under it, and the
browser's console reports no violation. Screenshots go to build/h19web/."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from campaigns.models import Run, Team
from campaigns.tests.factories import committed_campaign, make_user
from campaigns.tests.test_compare_runs import add_run
from catalog.models import RentalPlan
from catalog.services import seed_catalog
from tests.browser import MISSING, BrowserTestCase

BUILD = Path(__file__).resolve().parent.parent / "build" / "h19web"
CURVES = {"val_loss": (200, lambda s: 8 / (1 + s / 20)), "lr": (200, lambda s: 3e-4)}


@pytest.mark.browser
@pytest.mark.skipif(MISSING is not None, reason=MISSING or "")
class PagesUnderThePolicy(BrowserTestCase):
    implicit_wait = 2

    @classmethod
    def setUpClass(cls) -> None:
        super().setUpClass()
        BUILD.mkdir(parents=True, exist_ok=True)

    def setUp(self) -> None:
        if not RentalPlan.objects.exists():
            seed_catalog()
        self.team = Team.objects.create(name="nlp")
        self.owner = make_user("olga", team=self.team, role="owner", password="pw-olga")
        self.campaign = committed_campaign(self.team, self.owner, lots=1)
        add_run(self.campaign, "base-full", 0, "full", CURVES, {"seed": 1})
        add_run(self.campaign, "lora-r16", 1, "full", CURVES, {"seed": 2})

    def violations(self) -> list[str]:
        """What the console said about the policy since the last call (the log is drained)."""
        logs: list[dict[str, Any]] = self.browser.get_log("browser")
        return [
            str(e["message"])
            for e in logs
            if "Content Security Policy" in str(e["message"]) or "Refused to" in str(e["message"])
        ]

    def visit(self, name: str, path: str, ready: str, fits: bool = True) -> None:
        from selenium.webdriver.common.by import By
        from selenium.webdriver.support.ui import WebDriverWait

        self.browser.get(f"{self.live_server_url}{path}")
        found = WebDriverWait(self.browser, 30).until(
            lambda d: d.find_elements(By.CSS_SELECTOR, ready)
        )
        self.browser.execute_script("arguments[0].scrollIntoView({block: 'center'});", found[0])
        self.browser.save_screenshot(str(BUILD / f"{name}.png"))
        if fits:
            self.no_horizontal_scroll(name, against="window")
        self.assertEqual(self.violations(), [], name)

    def test_every_page_works_and_the_console_reports_no_violation(self) -> None:
        from selenium.webdriver.common.by import By
        from selenium.webdriver.support.ui import Select, WebDriverWait

        b = self.browser
        self.visit("login", "/admin/login/", "input[name=username]")
        b.find_element(By.NAME, "username").send_keys("olga")
        b.find_element(By.NAME, "password").send_keys("pw-olga")
        b.find_element(By.CSS_SELECTOR, "input[type=submit]").click()
        WebDriverWait(b, 10).until(lambda d: "/login/" not in d.current_url)
        self.assertEqual(self.violations(), [])

        c = self.campaign.pk
        # fits=False: a committed campaign's items table, with its amendment-reason column, is
        # 1407 px wide at 1366 (on main before this policy too, open in issue 18; a draft fits:
        # tests/test_browser_campaign_page.py). The policy is what this test checks.
        self.visit(
            "campaign-page",
            f"/admin/campaigns/campaign/{c}/change/",
            "#calendar-figure svg",
            fits=False,
        )
        run = Run.objects.get(run_id="base-full")
        self.visit("run-page", f"/admin/campaigns/run/{run.pk}/change/", ".metric-chart canvas")
        self.visit(
            "compare-page",
            f"/admin/campaigns/campaign/{c}/compare/?metric=val_loss",
            ".metric-chart canvas",
        )
        # The metric menu submits its form from pages.js (it was an onchange attribute).
        Select(b.find_element(By.ID, "metric-select")).select_by_value("lr")
        WebDriverWait(b, 10).until(lambda d: "metric=lr" in d.current_url)
        self.assertEqual(self.violations(), [])
        self.visit(
            "portfolio", f"/admin/campaigns/team/{self.team.pk}/portfolio/", "#portfolio-table"
        )
        self.visit("api-docs", "/api/v1/docs/", ".opblock")
        # MLflow's "View run" link: the landing page's script (a static file) goes to the run.
        b.get(f"{self.live_server_url}/mlflow/#/experiments/{c}/runs/base-full")
        WebDriverWait(b, 10).until(lambda d: f"/run/{run.pk}/change/" in d.current_url)
        self.assertEqual(self.violations(), [])
