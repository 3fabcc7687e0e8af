"""The campaign page a planner wants to live in (issue 9), in a 1366×768 headless Chromium.

A planner plans a campaign from scratch through the admin (items, stop rules, stages with a
dependency, a decision point, a lot), makes a save fail and finds the error in the first
screen, commits through the confirmation page, and no page scrolls sideways. Screenshots go to
build/.
"""

from __future__ import annotations

import math
from decimal import Decimal
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command

from campaigns.models import Campaign, Checkpoint, Team
from campaigns.tests.factories import add_points, make_user
from catalog.models import RentalPlan
from catalog.services import seed_catalog
from tests.browser import MISSING, BrowserTestCase

BUILD = Path(__file__).resolve().parent.parent / "build"


@pytest.mark.browser
@pytest.mark.skipif(MISSING is not None, reason=MISSING or "")
class CampaignPageAt1366(BrowserTestCase):
    def setUp(self) -> None:
        self.team = Team.objects.create(name="nlp")
        make_user("pia", team=self.team, role="planner", password="pw-pia")
        if not RentalPlan.objects.exists():
            seed_catalog()  # a live-server test before this one flushed the migrations' rows
        BUILD.mkdir(exist_ok=True)

    # --- helpers -------------------------------------------------------------------------

    def select_text(self, name: str, text: str) -> None:
        from selenium.webdriver.common.by import By
        from selenium.webdriver.support.ui import Select

        Select(self.browser.find_element(By.NAME, name)).select_by_visible_text(text)

    def save(self) -> None:
        from selenium.webdriver.common.by import By

        button = self.browser.find_element(By.NAME, "_continue")
        self.browser.execute_script("arguments[0].click();", button)

    def when_too_wide(self, page: str) -> list[str]:
        self.shot(f"too-wide-{page.replace(' ', '-')}.png")
        return []

    def shot(self, name: str) -> None:
        self.browser.save_screenshot(str(BUILD / name))

    def page_height(self) -> Any:
        return self.browser.execute_script("return document.documentElement.scrollHeight;")

    # --- the test ------------------------------------------------------------------------

    def test_a_planner_plans_from_scratch_sees_errors_first_and_commits_after_confirming(
        self,
    ) -> None:
        from selenium.webdriver.common.by import By

        b = self.browser
        self.log_in("pia")
        b.get(f"{self.live_server_url}/admin/campaigns/campaign/add/")
        self.no_horizontal_scroll("the add page")
        team = b.find_element(By.NAME, "team")
        self.assertEqual(team.get_attribute("value"), str(self.team.pk), "team not preselected")
        self.fill("title", "Rank 16 or rank 64?")
        self.fill("question", "Does a LoRA variant beat the baseline by 1 F1?")
        self.fill("corpus_name", "tickets")
        self.fill("corpus_revision", "sha256:abc")
        self.fill("window_hours", "72")
        self.fill("budget", "47.14")
        # Inlines start with one empty row.
        self.fill("items-0-name", "baseline")
        self.select("items-0-role", "baseline")
        self.select("items-0-tier", "mandatory")
        self.fill("items-0-planned_hours", "10")
        self.select("stop_rules-0-kind", "non_finite_loss")
        self.fill("stop_rules-0-metric", "loss")
        self.save()
        self.assertEqual(b.find_elements(By.CSS_SELECTOR, ".errornote, .errorlist"), [])
        campaign = Campaign.objects.get(title="Rank 16 or rank 64?")

        # A failed save: a second item with hours but no name.
        self.fill("items-1-planned_hours", "12")
        self.select("items-1-tier", "useful")
        self.save()
        note = b.find_element(By.ID, "error-summary")
        self.assertIn("errornote", note.get_attribute("class"))
        top, bottom, inner = b.execute_script(
            "var r = arguments[0].getBoundingClientRect();"
            "return [r.top, r.bottom, window.innerHeight];",
            note,
        )
        self.assertGreaterEqual(top, 0)
        self.assertLessEqual(bottom, inner, "the error summary is not in the first viewport")
        link = note.find_element(By.CSS_SELECTOR, "a")
        self.assertEqual(link.get_attribute("href").split("#")[1], "id_items-1-name")
        self.no_horizontal_scroll("the page after a failed save")
        self.shot("campaign-page-error.png")

        # Fix it, and add a stage.
        self.fill("items-1-name", "variant A")
        self.select("items-1-role", "variant")
        self.fill("stages-0-name", "Train baseline")
        self.select("stages-0-kind", "training")
        self.fill("stages-0-resource", "gpu-a")
        self.select_text("stages-0-variant", "baseline (mandatory)")
        self.fill("stages-0-planned_hours", "10")
        self.save()
        self.assertEqual(b.find_elements(By.CSS_SELECTOR, ".errornote, .errorlist"), [])

        # A second stage depending on the first, a decision point, a lot.
        self.fill("stages-1-name", "Train variant A")
        self.select("stages-1-kind", "training")
        self.fill("stages-1-resource", "gpu-a")
        self.select_text("stages-1-variant", "variant A (useful)")
        self.fill("stages-1-planned_hours", "12")
        self.select_text("stages-1-depends_on", "Train baseline (10.00 h)")
        self.fill("decisions-0-label", "After the pilot")
        plan = RentalPlan.objects.get(provider="IteraGPU", name="RTX 4090, 3 days")
        self.select("lots-0-plan", str(plan.pk))
        self.fill("lots-0-quantity", "1")
        self.save()
        self.assertEqual(
            [e.text for e in b.find_elements(By.CSS_SELECTOR, ".errornote, .errorlist")], []
        )
        self.assertEqual(campaign.stages.count(), 2)
        second = campaign.stages.get(name="Train variant A")
        self.assertEqual([s.name for s in second.depends_on.all()], ["Train baseline"])
        self.assertEqual(campaign.decisions.count(), 1)
        self.assertEqual(campaign.lots.count(), 1)
        gantt = b.find_element(By.ID, "calendar-gantt")
        self.assertEqual(len(gantt.find_elements(By.CSS_SELECTOR, "rect.stage")), 2)
        self.assertEqual(len(gantt.find_elements(By.CSS_SELECTOR, "rect.critical")), 2)
        self.assertEqual(len(gantt.find_elements(By.CSS_SELECTOR, "rect.lot")), 1)
        self.no_horizontal_scroll("the planned campaign")
        self.shot("campaign-page-planned.png")

        # Commit: the page asks first, then commits on the second click.
        b.find_element(By.ID, "commit-plan").click()
        self.assertIn("What commit freezes", b.find_element(By.ID, "content").text)
        self.no_horizontal_scroll("the commit confirmation")
        self.shot("campaign-commit-confirm.png")
        campaign.refresh_from_db()
        self.assertEqual(campaign.status, "draft")
        b.find_element(By.ID, "confirm-commit").click()
        self.assertIn("is committed", self.message_after_click("is committed"))
        campaign.refresh_from_db()
        self.assertEqual(campaign.status, "committed")
        self.no_horizontal_scroll("the committed campaign")
        items = b.find_element(By.ID, "items-group")
        b.execute_script("arguments[0].scrollIntoView();", items)
        self.shot("campaign-page-committed-items.png")
        # A finished run gives its stage its observed hours; the table shows them beside the
        # typed column, and the row still fits (docs/domain.md §8.6).
        campaign.runs.create(
            team=self.team,
            run_id="base-0",
            variant=campaign.items.get(name="baseline"),
            kind="full",
            config_digest="-",
            status="completed",
            observed_hours=Decimal("9.5"),
        )
        b.refresh()
        stages = b.find_element(By.ID, "stages-group")
        self.assertIn("9.5 h (1 run)", stages.text)
        self.assertIn("no run: type it", stages.text)
        self.no_horizontal_scroll("the committed campaign with a run")
        b.execute_script("arguments[0].scrollIntoView();", stages)
        self.shot("campaign-page-committed-stages.png")

        b.find_element(By.ID, "close-campaign").click()
        self.assertIn("What closing does", b.find_element(By.ID, "content").text)
        self.no_horizontal_scroll("the close page")

        # A run's page: its curve with the NaN and the stop marked, its checkpoints.
        run = campaign.runs.create(
            team=self.team,
            run_id="base-1",
            variant=campaign.items.get(name="baseline"),
            kind="full",
            config_digest="-",
            status="stopped",
            stop_step=300,
            stop_reason="loss is NaN at step 300",
        )
        add_points(run, [("loss", s, 3 - s / 200) for s in range(300)] + [("loss", 300, math.nan)])
        Checkpoint.objects.create(
            run=run,
            step=200,
            components=["model", "optimizer", "progress"],
            size_bytes=1_400_000_000,
            write_seconds=8.5,
            restore_seconds=21,
            location="s3://checkpoints/rank16/base-1/step-200",
            resume_verified=True,
        )
        b.get(f"{self.live_server_url}/admin/campaigns/run/{run.pk}/change/")
        # The interactive chart (campaigns/static/campaigns/charts.js) marks them from its data.
        chart = b.find_element(By.CSS_SELECTOR, ".metric-chart")
        self.assertTrue(chart.find_elements(By.CSS_SELECTOR, "canvas"))
        data = b.execute_script(
            "return JSON.parse(document.getElementById("
            "arguments[0].getAttribute('data-chart')).textContent);",
            chart,
        )
        self.assertEqual(len(data["non_finite"]), 1)
        self.assertIsNotNone(data["stop_step"])
        self.no_horizontal_scroll("the run page")
        self.shot("run-page-stopped.png")
        b.execute_script("arguments[0].scrollIntoView();", chart)
        self.shot("run-page-curves.png")

    def test_the_demo_campaign_page_fits_the_width_and_half_its_old_height(self) -> None:
        call_command("load_demo", stdout=StringIO())
        demo = Campaign.objects.get(team__name="demo")
        make_user("dora", team=demo.team, role="planner", password="pw-dora")
        self.log_in("dora")
        self.browser.get(f"{self.live_server_url}/admin/campaigns/campaign/{demo.pk}/change/")
        self.no_horizontal_scroll("the demo campaign")
        self.shot("campaign-page-demo.png")
        stages = self.browser.find_element("id", "decisions-group")
        self.browser.execute_script("arguments[0].scrollIntoView();", stages)
        self.shot("campaign-page-demo-stages.png")
        self.browser.execute_script("window.scrollTo(0, 0);")
        parts = self.browser.execute_script(
            "var out = [];"
            "document.querySelectorAll('#campaign-summary > *, fieldset, .inline-group')"
            ".forEach(function (e) {"
            "  out.push((e.id || e.tagName) + ':' + Math.round(e.getBoundingClientRect().height));"
            "});"
            "return out;"
        )
        # 4,100: the four named plan figures (issue 18) add one 39 px line to the summary; 4,300:
        # the one timeline (issue 30) draws the lots' lane and each stage's committed outline
        # beside its bar, and lists the plan's warnings in the summary (4,243 px measured).
        self.assertLessEqual(self.page_height(), 4300, parts)
        print("demo campaign page height:", self.page_height())
        # The forecast and the hardware options say which figure each shows (§8.5).
        panel = self.browser.find_element("id", "forecast-panel")
        self.assertIn("calendar length", panel.find_element("id", "forecast-figures").text)
        self.browser.execute_script(
            "document.getElementById('hardware-options-details').open = true;"
            "arguments[0].scrollIntoView();",
            panel,
        )
        self.no_horizontal_scroll("the demo campaign's panels")
        self.shot("campaign-page-demo-panels.png")

    def test_the_compare_runs_page_overlays_the_runs_and_fits_the_width(self) -> None:
        from selenium.webdriver.common.by import By

        from campaigns.tests.factories import committed_campaign
        from campaigns.tests.test_compare_runs import add_run

        owner = make_user("olga", team=self.team, role="owner", password="pw-olga")
        campaign = committed_campaign(self.team, owner, lots=0, automatic_rules=True)
        for i, (run_id, kind) in enumerate([("base-pilot", "pilot"), ("base-full", "full")]):
            add_run(
                campaign,
                run_id,
                0,
                kind,
                {"loss": (200, lambda s, i=i: 3 / (1 + s / 40) + i * 0.1)},
            )
        add_run(campaign, "lora-full", 1, "full", {"loss": (160, lambda s: 2.8 / (1 + s / 30))})
        b = self.browser
        self.log_in("pia")
        b.get(f"{self.live_server_url}/admin/campaigns/campaign/{campaign.pk}/change/")
        b.find_element(By.ID, "compare-runs").click()
        chart = b.find_element(By.CSS_SELECTOR, "#compare-figure .metric-chart")
        self.assertTrue(chart.find_elements(By.CSS_SELECTOR, "canvas"))
        data = b.execute_script(
            "return JSON.parse(arguments[0].textContent);", b.find_element(By.ID, "compare-data")
        )
        self.assertEqual(len(data["series"]), 3)
        self.assertEqual(sum(1 for s in data["series"] if s["dashed"]), 1)
        self.assertEqual(len(b.find_elements(By.CSS_SELECTOR, "#compare-legend tbody tr")), 3)
        self.no_horizontal_scroll("the compare page")
        self.shot("compare-runs-1366.png")
