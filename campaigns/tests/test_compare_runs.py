"""The campaign's "Compare runs" page: one metric of every run on shared axes (issue 9)."""

from __future__ import annotations

from django.db import connection
from django.test import TestCase
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from campaigns.models import Campaign, Run, Team
from campaigns.tests.factories import add_points, committed_campaign, make_user


def add_run(campaign: Campaign, run_id: str, item_index: int, kind: str, metrics: dict) -> Run:
    item = list(campaign.items.order_by("name"))[item_index]
    run = Run.objects.create(
        team=campaign.team,
        campaign=campaign,
        run_id=run_id,
        variant=item,
        kind=kind,
        config_digest=Run.digest_config({}),
    )
    add_points(
        run, [(name, s, value(s)) for name, (steps, value) in metrics.items() for s in range(steps)]
    )
    return run


class CompareRuns(TestCase):
    @classmethod
    def setUpTestData(cls) -> None:
        cls.team = Team.objects.create(name="nlp")
        cls.viewer = make_user("vic", team=cls.team, role="viewer")
        cls.campaign = committed_campaign(cls.team, cls.viewer, lots=0, automatic_rules=True)
        loss = (30, lambda s: 3 - s / 20)
        acc = (30, lambda s: s / 30)
        add_run(cls.campaign, "base-pilot", 0, "pilot", {"loss": loss})
        add_run(cls.campaign, "base-full", 0, "full", {"loss": loss, "acc": acc})
        add_run(cls.campaign, "lora-full", 1, "full", {"loss": loss, "acc": acc})
        cls.other = Team.objects.create(name="vision")
        cls.stranger = make_user("sam", team=cls.other, role="owner")

    def url(self, campaign: Campaign | None = None) -> str:
        return reverse("admin:campaigns_campaign_compare", args=[(campaign or self.campaign).pk])

    def test_it_overlays_the_most_common_metric_coloured_by_item_with_pilots_dashed(self) -> None:
        self.client.force_login(self.viewer)
        page = self.client.get(self.url())
        self.assertEqual(page.status_code, 200)
        html = page.content.decode()
        self.assertIn('class="metric-overlay"', html)
        self.assertIn("loss: 3 runs", html)
        start = html.index('class="metric-overlay"')
        svg = html[start : html.index("</svg>", start)]
        self.assertEqual(svg.count('<g class="run">'), 3)
        # One pilot, so exactly one dashed line in the chart.
        self.assertEqual(svg.count("stroke-dasharray"), 1)
        colours = {row["run"].run_id: row["colour"] for row in page.context["legend"]}
        self.assertEqual(colours["base-pilot"], colours["base-full"])
        self.assertNotEqual(colours["base-full"], colours["lora-full"])
        for run_id in ("base-pilot", "base-full", "lora-full"):
            self.assertIn(run_id, html)
        self.assertIn("Pilot", html)

    def test_it_shows_the_metric_asked_for(self) -> None:
        self.client.force_login(self.viewer)
        page = self.client.get(self.url() + "?metric=acc")
        self.assertIn("acc: 2 runs", page.content.decode())
        self.assertIn('<option value="acc" selected>', page.content.decode())
        self.assertEqual(self.client.get(self.url() + "?metric=nope").status_code, 404)

    def test_it_answers_404_for_another_teams_campaign(self) -> None:
        self.client.force_login(self.stranger)
        self.assertEqual(self.client.get(self.url()).status_code, 404)

    def test_the_campaign_page_links_to_it(self) -> None:
        self.client.force_login(self.viewer)
        page = self.client.get(reverse("admin:campaigns_campaign_change", args=[self.campaign.pk]))
        self.assertContains(page, self.url())

    def test_its_queries_do_not_grow_with_the_number_of_runs(self) -> None:
        self.client.force_login(self.viewer)
        self.client.get(self.url())  # warm the session and content-type caches
        with CaptureQueriesContext(connection) as few:
            self.client.get(self.url())
        for i in range(5):
            add_run(self.campaign, f"more-{i}", i % 2, "full", {"loss": (10, float)})
        with CaptureQueriesContext(connection) as many:
            page = self.client.get(self.url())
        self.assertIn("loss: 8 runs", page.content.decode())
        self.assertEqual(len(many), len(few))
