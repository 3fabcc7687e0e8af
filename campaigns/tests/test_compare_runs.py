"""The campaign's "Compare runs" page: one metric of every run on shared axes (issue 9)."""

from __future__ import annotations

from django.db import connection
from django.test import TestCase
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from campaigns.models import Campaign, Run, Team
from campaigns.tests.factories import add_points, committed_campaign, grow_plan, make_user


def add_run(
    campaign: Campaign,
    run_id: str,
    item_index: int,
    kind: str,
    metrics: dict,
    config: dict | None = None,
) -> Run:
    item = list(campaign.items.order_by("name"))[item_index]
    run = Run.objects.create(
        team=campaign.team,
        campaign=campaign,
        run_id=run_id,
        variant=item,
        kind=kind,
        config=config or {},
        config_digest=Run.digest_config(config or {}),
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
        shared = {"seed": 1, "optimizer": {"name": "adamw", "lr": 2e-4}}
        add_run(cls.campaign, "base-pilot", 0, "pilot", {"loss": loss}, {**shared, "steps": 30})
        add_run(cls.campaign, "base-full", 0, "full", {"loss": loss, "acc": acc}, shared)
        lora = {**shared, "optimizer": {"name": "adamw", "lr": 1e-4}, "rank": 16}
        add_run(
            cls.campaign,
            "lora-full",
            1,
            "full",
            {"loss": (30, lambda s: 2 - s / 40), "acc": acc},
            lora,
        )
        cls.other = Team.objects.create(name="vision")
        cls.stranger = make_user("sam", team=cls.other, role="owner")

    def url(self, campaign: Campaign | None = None) -> str:
        return reverse("admin:campaigns_campaign_compare", args=[(campaign or self.campaign).pk])

    def test_it_overlays_the_most_common_metric_a_colour_per_run_with_pilots_dashed(self) -> None:
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
        self.assertEqual(len(set(colours.values())), 3)  # runs of one item no longer hide
        self.assertIn('id="compare-data"', html)  # the interactive chart's data
        self.assertIn("<noscript>", html)
        for run_id in ("base-pilot", "base-full", "lora-full"):
            self.assertIn(run_id, html)
        self.assertIn("Pilot", html)

    def test_a_table_of_last_and_best_values_best_the_lowest_for_a_loss(self) -> None:
        self.client.force_login(self.viewer)
        page = self.client.get(self.url())
        rows = {row["run"].run_id: row for row in page.context["legend"]}
        self.assertEqual(rows["base-full"]["last"], "1.55")  # 3 - 29/20
        self.assertEqual(rows["base-full"]["best"], "1.55")
        self.assertEqual(rows["lora-full"]["last"], "1.275")  # 2 - 29/40
        self.assertContains(page, "Best (lowest)")
        acc = self.client.get(self.url() + "?metric=acc")
        self.assertContains(acc, "Best (highest)")
        rows = {row["run"].run_id: row for row in acc.context["legend"]}
        self.assertEqual(rows["base-full"]["best"], "0.96667")

    def test_the_stop_rules_threshold_is_drawn_as_a_line(self) -> None:
        # The factory's automatic rules stop a run whose val_loss exceeds 10.
        add_run(self.campaign, "val-full", 1, "full", {"val_loss": (5, lambda s: 12 - s)})
        self.client.force_login(self.viewer)
        page = self.client.get(self.url() + "?metric=val_loss")
        self.assertEqual(page.context["chart"]["threshold"], 10)
        self.assertContains(page, 'id="compare-threshold"')
        self.assertEqual(page.context["legend"][0]["best"], "8")  # lowest: the rule is "> 10"
        self.assertIsNone(self.client.get(self.url()).context["threshold"])

    def test_the_configuration_keys_that_differ_are_a_table(self) -> None:
        self.client.force_login(self.viewer)
        page = self.client.get(self.url())
        diff = dict(page.context["config_diff"])
        order = [row["run"].run_id for row in page.context["legend"]]
        self.assertEqual(set(diff), {"optimizer.lr", "rank", "steps"})
        self.assertEqual(diff["rank"][order.index("lora-full")], "16")
        self.assertEqual(diff["rank"][order.index("base-full")], "—")
        self.assertContains(page, 'id="config-diff"')
        self.assertNotContains(page, '<th scope="row">seed</th>')

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

    def test_its_queries_do_not_grow_with_the_number_of_items(self) -> None:
        self.client.force_login(self.viewer)
        self.client.get(self.url())  # warm the session and content-type caches
        with CaptureQueriesContext(connection) as few:
            self.client.get(self.url())
        grow_plan(self.campaign, 60)
        for i in range(6):
            add_run(self.campaign, f"item-{i}", 10 + i, "full", {"loss": (10, float)})
        with CaptureQueriesContext(connection) as many:
            page = self.client.get(self.url())
        self.assertIn("loss: 9 runs", page.content.decode())
        self.assertEqual(len(many), len(few))
