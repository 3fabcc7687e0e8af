"""The interactive charts (uPlot, campaigns/static/campaigns/charts.js) and the Gantt, in a
1366×768 headless Chromium: the run page and the compare page draw a uPlot canvas, hovering puts
values in the legend, the log-scale toggle and smoothing redraw, nothing scrolls sideways.
Screenshots go to build/ (run-page.png, compare-page.png, campaign-gantt.png)."""

from __future__ import annotations

from decimal import Decimal
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command

from campaigns.models import Campaign, Run, Team
from campaigns.tests.factories import committed_campaign, make_user
from campaigns.tests.test_compare_runs import add_run
from catalog.models import RentalPlan
from catalog.services import seed_catalog
from tests.browser import MISSING, BrowserTestCase

BUILD = Path(__file__).resolve().parent.parent / "build"


@pytest.mark.browser
@pytest.mark.skipif(MISSING is not None, reason=MISSING or "")
class ChartsAt1366(BrowserTestCase):
    def setUp(self) -> None:
        self.team = Team.objects.create(name="nlp")
        self.owner = make_user("olga", team=self.team, role="owner", password="pw-olga")
        if not RentalPlan.objects.exists():
            seed_catalog()
        BUILD.mkdir(exist_ok=True)

    def js(self, script: str, *args: Any) -> Any:
        return self.browser.execute_script(script, *args)

    def hover_reads_a_value(self, chart: Any) -> str:
        from selenium.webdriver.common.action_chains import ActionChains
        from selenium.webdriver.common.by import By

        over = chart.find_element(By.CSS_SELECTOR, ".u-over")
        self.js("arguments[0].scrollIntoView({block: 'center'});", chart)
        ActionChains(self.browser).move_to_element_with_offset(over, 40, 0).perform()
        value = chart.find_element(By.CSS_SELECTOR, ".u-legend .u-series:nth-child(2) .u-value")
        return str(value.text)

    def campaign_with_runs(self) -> Campaign:
        campaign = committed_campaign(self.team, self.owner, lots=1, automatic_rules=True)
        curves = {
            "val_loss": (300, lambda s: 12 / (1 + s / 30) + (s % 7) * 0.05),
            "lr": (300, lambda s: 3e-4),
        }
        add_run(campaign, "base-pilot", 0, "pilot", curves, {"seed": 1, "rank": 8, "steps": 300})
        add_run(campaign, "base-full", 0, "full", curves, {"seed": 1, "rank": 8})
        add_run(
            campaign,
            "lora-r16",
            1,
            "full",
            {"val_loss": (240, lambda s: 11 / (1 + s / 25)), "lr": (240, lambda s: 2e-4)},
            {"seed": 1, "rank": 16, "optimizer": {"lr": 2e-4}},
        )
        return campaign

    def test_the_run_page_draws_an_interactive_chart_with_hover_log_and_smoothing(self) -> None:
        from selenium.webdriver.common.by import By
        from selenium.webdriver.support.ui import WebDriverWait

        campaign = self.campaign_with_runs()
        run = Run.objects.get(campaign=campaign, run_id="base-full")
        self.log_in("olga")
        b = self.browser
        b.get(f"{self.live_server_url}/admin/campaigns/run/{run.pk}/change/")
        WebDriverWait(b, 10).until(
            lambda d: d.find_elements(By.CSS_SELECTOR, ".metric-chart canvas")
        )
        charts = b.find_elements(By.CSS_SELECTOR, ".metric-chart")
        self.assertEqual(len(charts), 2)  # lr and val_loss
        loss = charts[1]
        self.assertNotIn(self.hover_reads_a_value(loss), ("", "—", "--"))
        loss.find_element(By.CSS_SELECTOR, ".chart-log").click()
        self.assertEqual(self.js("return arguments[0].uplot.scales.y.distr;", loss), 3)
        self.js(
            "var r = arguments[0].querySelector('.chart-smooth'); r.value = 0.9;"
            "r.dispatchEvent(new Event('input'));",
            loss,
        )
        self.assertIn("smoothed 0.90", loss.find_element(By.CSS_SELECTOR, ".u-title").text)
        self.no_horizontal_scroll("the run page", against="window")
        self.js("arguments[0].scrollIntoView();", charts[0])
        b.save_screenshot(str(BUILD / "run-page.png"))

    def test_the_compare_page_draws_every_run_with_the_threshold_and_tables(self) -> None:
        from selenium.webdriver.common.by import By
        from selenium.webdriver.support.ui import WebDriverWait

        campaign = self.campaign_with_runs()
        self.log_in("olga")
        b = self.browser
        b.get(
            f"{self.live_server_url}/admin/campaigns/campaign/{campaign.pk}/compare/"
            "?metric=val_loss"
        )
        WebDriverWait(b, 10).until(
            lambda d: d.find_elements(By.CSS_SELECTOR, "#compare-figure canvas")
        )
        chart = b.find_element(By.CSS_SELECTOR, "#compare-figure .metric-chart")
        self.assertEqual(self.js("return arguments[0].uplot.series.length;", chart), 4)
        self.assertNotIn(self.hover_reads_a_value(chart), ("", "—", "--"))
        chart.find_element(By.CSS_SELECTOR, ".chart-log").click()
        self.assertEqual(self.js("return arguments[0].uplot.scales.y.distr;", chart), 3)
        chart.find_element(By.CSS_SELECTOR, ".chart-log").click()
        self.assertEqual(len(b.find_elements(By.CSS_SELECTOR, "#compare-legend tbody tr")), 3)
        self.assertTrue(b.find_elements(By.ID, "compare-threshold"))
        keys = [e.text for e in b.find_elements(By.CSS_SELECTOR, "#config-diff tbody th")]
        self.assertEqual(keys, ["optimizer.lr", "rank", "steps"])
        self.no_horizontal_scroll("the compare page", against="window")
        self.hover_reads_a_value(chart)  # the screenshot shows the legend's values
        b.save_screenshot(str(BUILD / "compare-page.png"))

    def test_the_demo_gantt_is_drawn_to_scale_with_observed_hours(self) -> None:
        from selenium.webdriver.common.by import By

        call_command("load_demo", stdout=StringIO())
        demo = Campaign.objects.get(team__name="demo")
        first = demo.stages.filter(machine=True).order_by("id").first()
        if first is not None:
            first.observed_hours = Decimal(first.planned_hours) * Decimal("1.2")
            first.save(update_fields=["observed_hours"])
        make_user("dora", team=demo.team, role="planner", password="pw-dora")
        self.log_in("dora")
        self.browser.get(f"{self.live_server_url}/admin/campaigns/campaign/{demo.pk}/change/")
        figure = self.browser.find_element(By.ID, "calendar-figure")
        self.js("arguments[0].scrollIntoView();", figure)
        # The observed stage is drawn done, where it ran, beside its committed outline.
        self.assertTrue(figure.find_elements(By.CSS_SELECTOR, "rect.stage.done"))
        self.assertTrue(figure.find_elements(By.CSS_SELECTOR, "rect.committed"))
        self.assertTrue(figure.find_elements(By.CSS_SELECTOR, "line.window"))
        self.no_horizontal_scroll("the demo campaign", against="window")
        figure.screenshot(str(BUILD / "campaign-gantt.png"))
