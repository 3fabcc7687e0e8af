"""The closing report reads its hours from the campaign's one timeline (issue 30; docs/domain.md
§7a, §16): its HTML, Markdown and JSON state the hours `campaign_forecast(...).timeline`
states, its `timeline` section is the API's `GET /campaigns/{id}/timeline/` answer, and at the
close the observed total is the sum of the stages that ran plus the runs tied to no stage, a
cut stage counting only what ran before the cut (not its planned hours: the issue's "as
observed 83.50 h")."""

from __future__ import annotations

import json
import re
from decimal import Decimal

from django.test import TestCase

from campaigns.models import Campaign, Team
from campaigns.tests.factories import as_user, celery_eager, make_user
from estimates.domain.timeline_json import hours as json_hours
from estimates.selectors.timeline import campaign_forecast
from ledger.models import Report
from ledger.tests.support import CALENDAR_HOURS, seed_campaign


class TheReportTellsTheTimelinesHours(TestCase):
    @classmethod
    def setUpTestData(cls) -> None:
        cls.team = Team.objects.create(name="nlp")
        cls.planner = make_user("pia", team=cls.team)
        cls.built = seed_campaign(as_user(cls.planner))

    def setUp(self) -> None:
        self.api = as_user(self.planner)
        self.campaign = Campaign.objects.get(pk=self.built["id"])
        with celery_eager(), self.captureOnCommitCallbacks(execute=True):
            answer = self.api.post(f"/api/v1/campaigns/{self.campaign.pk}/reports/", {})
        self.assertEqual(answer.status_code, 202, answer.content)
        report = Report.objects.get(pk=answer.json()["id"])
        self.assertEqual(report.status, "ready", report.error)
        self.data = json.loads(self.api.get(f"/api/v1/reports/{report.pk}/json/").content)
        self.markdown = self.api.get(f"/api/v1/reports/{report.pk}/markdown/").content.decode()
        self.html = self.api.get(f"/api/v1/reports/{report.pk}/html/").content.decode()
        self.timeline = campaign_forecast(self.campaign).timeline

    def test_the_observed_total_is_the_stages_that_ran_plus_the_unattributed_runs(self) -> None:
        hours = self.data["hours"]
        ran = sum(
            (Decimal(s["observed_hours"]) for s in hours["stages"] if s["observed_hours"]),
            Decimal(0),
        )
        self.assertEqual(
            Decimal(hours["observed_hours"]), ran + Decimal(hours["unattributed_run_hours"])
        )
        self.assertEqual(hours["observed_hours"], CALENDAR_HOURS)
        self.assertEqual(hours["observed_hours"], json_hours(self.timeline.observed.total))
        # The cut stage counts the 0.5 h it ran, not its 10 planned hours.
        cut = next(s for s in hours["stages"] if s["name"] == "Train variant B")
        self.assertEqual((cut["state"], cut["forecast_hours"]), ("cut", "0.50"))
        self.assertEqual(hours["totals"]["forecast_calendar_hours"], CALENDAR_HOURS)
        self.assertEqual(hours["totals"]["planned_calendar_hours"], "48.00")

    def test_every_stage_row_states_the_timelines_committed_observed_and_current_hours(
        self,
    ) -> None:
        rows = {r["id"]: r for r in self.data["hours"]["stages"]}
        self.assertEqual(set(rows), {s.id for s in self.timeline.stages})
        for line in self.timeline.stages:
            row = rows[line.id]
            self.assertEqual(row["planned_hours"], json_hours(line.planned_hours), line.key)
            self.assertEqual(row["observed_hours"], json_hours(line.observed.hours), line.key)
            self.assertEqual(row["forecast_hours"], json_hours(line.hours), line.key)
            self.assertEqual(
                (row["planned_start"], row["start"], row["state"]),
                (json_hours(line.planned_start), json_hours(line.start), line.state),
            )

    def test_the_json_carries_the_apis_timeline_and_the_forecasts_headline(self) -> None:
        api = self.api.get(f"/api/v1/campaigns/{self.campaign.pk}/timeline/")
        self.assertEqual(api.status_code, 200)
        self.assertEqual(self.data["timeline"], api.json())
        self.assertEqual(self.data["timeline"]["forecast_hours"], CALENDAR_HOURS)
        headline = campaign_forecast(self.campaign).headline
        self.assertEqual(self.data["headline"], headline)
        self.assertIn("78.3", headline)

    def test_the_markdown_and_the_html_say_the_same_hours(self) -> None:
        hours = self.data["hours"]
        for text in (self.markdown, self.html.replace("<strong>", "").replace("</strong>", "")):
            self.assertIn("Observed hours (each stage's one figure", text)
            self.assertIn(f"{hours['observed_hours']} h", text)
            self.assertRegex(text, rf"as it ran and is forecast \**(<[^>]+>)?{CALENDAR_HOURS} h")
            self.assertNotIn("as observed", text)
        self.assertIn(self.data["headline"], self.markdown)
        self.assertIn('id="report-headline"', self.html)
        # The cut stage's row: its state and the 0.50 h it ran, in both.
        self.assertIn(
            "| Train variant B | training | cut | 28.00–38.00 | 10.00 | 0.50 (runs) | 0.50 | "
            "-9.50 (-95.0%) | cut by a decision: it counts what ran before the cut |",
            self.markdown,
        )
        row = re.search(r"<tr><td>Train variant B</td>.*?</tr>", self.html)
        assert row is not None
        self.assertIn("<td>cut</td>", row.group(0))
        self.assertIn('<td class="num">0.50</td>', row.group(0))

    def test_the_gantt_is_drawn_from_the_timeline(self) -> None:
        self.assertIn('id="calendar-gantt"', self.html)
        self.assertEqual(len(re.findall(r'class="stage cut\b', self.html)), 1)
        drawn = {s["key"]: s for s in self.data["gantt"]["stages"]}
        for line in self.timeline.stages:
            # The bar where the stage ran or is forecast, the committed outline where it was put.
            self.assertEqual(drawn[line.key]["start_hours"], line.start)
            self.assertEqual(drawn[line.key]["planned_start"], line.planned_start)
