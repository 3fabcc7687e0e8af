"""The closing report shows a resumed run per segment (docs/domain.md §4, §16): each stretch's
hours and the rental entry it posted, in the HTML, the Markdown and the JSON alike."""

from __future__ import annotations

import json
from decimal import Decimal

from django.test import TestCase

from campaigns.models import Campaign, Team
from campaigns.services import run_lifecycle
from campaigns.services.run_lifecycle import resume_run
from campaigns.tests.factories import committed_campaign, make_run, make_user
from ledger.rendering.closing_report import render_html, render_json, render_markdown
from ledger.selectors.closing_report import collect


class ResumedRunInTheReport(TestCase):
    @classmethod
    def setUpTestData(cls) -> None:
        team = Team.objects.create(name="nlp")
        owner = make_user("olga", team=team, role="owner")
        campaign = committed_campaign(team, owner, lots=0, hourly_rate_per_gpu=Decimal("2.50"))
        run = make_run(campaign, "crashy", status="running")
        run_lifecycle.finish_run(run=run, status="failed", observed_hours=Decimal("2.00"))
        resume_run(run=run)
        run_lifecycle.finish_run(run=run, status="completed", observed_hours=Decimal("5.00"))
        make_run(campaign, "steady", observed_hours="1.00")
        campaign = Campaign.objects.select_related("team", "committed_by").get(pk=campaign.pk)
        cls.data = collect(campaign)

    def test_the_json_lists_each_segment_with_its_hours_and_cost(self) -> None:
        (row,) = json.loads(render_json(self.data))["run_segments"]
        self.assertEqual(row["run_id"], "crashy")
        self.assertEqual(
            [(s["number"], s["status"], s["hours"], s["cost"]) for s in row["segments"]],
            [(1, "failed", "2.00", "5.00"), (2, "completed", "3.00", "7.50")],
        )
        self.assertEqual((row["hours"], row["cost"]), ("5.00", "12.50"))

    def test_the_html_and_the_markdown_show_the_same_segments(self) -> None:
        html = render_html(self.data)
        markdown = render_markdown(self.data)
        self.assertIn('id="run-segments"', html)
        for cells in (("1", "failed", "2.00", "5.00 USD"), ("2", "completed", "3.00", "7.50 USD")):
            self.assertRegex(html, r"<td>crashy</td><td class=\"num\">" + cells[0])
            for cell in cells:
                self.assertIn(cell, markdown)
        self.assertIn("| crashy | all | | | | **5.00** | **12.50 USD** |", markdown)
        self.assertIn("12.50 USD", html)
        self.assertNotIn("steady", markdown.split("Resumed runs, per segment")[1].split("##")[0])
