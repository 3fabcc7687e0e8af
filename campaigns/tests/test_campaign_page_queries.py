"""The campaign admin page costs the same at 20 and at 200 items, draft or committed: the same
SQL queries, the same number of rows and of ``<option>`` elements (the choice lists are written
once in the page, the tables paged), and under 1 MB of HTML (issue 21; times in
bench/campaign_page)."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from django.db import connection
from django.test import TestCase
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from campaigns.admin.inlines import ROWS_PER_PAGE
from campaigns.models import Campaign, PlannedItem, Stage, Team
from campaigns.services import commit_plan
from campaigns.tests.factories import make_plannable, make_user


def grow(campaign: Campaign, items: int) -> None:
    """Add items until the campaign has ``items``, each with a training stage following the
    previous item's stage."""
    have = campaign.items.count()
    made = PlannedItem.objects.bulk_create(
        PlannedItem(campaign=campaign, name=f"v{i}", planned_hours=Decimal("2"), rationale="r")
        for i in range(have, items)
    )
    stages = Stage.objects.bulk_create(
        Stage(
            campaign=campaign,
            name=f"train-{item.name}",
            kind="training",
            variant=item,
            planned_hours=Decimal("2"),
            resource=f"gpu-{i % 4}",
        )
        for i, item in enumerate(made)
    )
    through = Stage.depends_on.through
    through.objects.bulk_create(
        through(from_stage_id=later.pk, to_stage_id=earlier.pk)
        for earlier, later in zip(stages, stages[1:], strict=False)
    )


class CampaignPageCost(TestCase):
    @classmethod
    def setUpTestData(cls) -> None:
        cls.team = Team.objects.create(name="nlp")
        cls.planner = make_user("pia", team=cls.team, role="planner")
        cls.draft = make_plannable(cls.team, title="draft")
        cls.committed = make_plannable(cls.team, title="committed")
        grow(cls.committed, 20)
        commit_plan(campaign=cls.committed, user=cls.planner)

    def setUp(self) -> None:
        self.client.force_login(self.planner)

    def cost(self, campaign: Campaign) -> dict[str, Any]:
        url = reverse("admin:campaigns_campaign_change", args=[campaign.pk])
        self.client.get(url)  # warm the session and content-type caches
        with CaptureQueriesContext(connection) as captured:
            page = self.client.get(url)
        self.assertEqual(page.status_code, 200)
        return {
            "queries": len(captured),
            "options": page.content.count(b"<option"),
            "rows": page.content.count(b'class="form-row'),
            "bytes": len(page.content),
        }

    def grown_to_200(self, campaign: Campaign) -> Campaign:
        # A committed plan only grows by amendment; its rows are added here as a draft's are.
        grow(campaign, 200)
        return campaign

    def test_a_draft_costs_the_same_queries_rows_and_options_at_20_and_200_items(self) -> None:
        grow(self.draft, 20)
        at_20 = self.cost(self.draft)
        at_200 = self.cost(self.grown_to_200(self.draft))
        self.assertEqual(at_200["queries"], at_20["queries"])
        # The items', their work's and the stages' tables show a page each, not 600 rows.
        self.assertLess(at_200["rows"], 3 * ROWS_PER_PAGE + 30)
        # Each stage row holds its own choices only; the full lists are written once.
        self.assertLess(at_200["options"], 2 * at_20["options"])
        self.assertLess(at_200["bytes"], 1_000_000)

    def test_a_committed_plan_costs_the_same_queries_at_20_and_200_items(self) -> None:
        at_20 = self.cost(self.committed)
        at_200 = self.cost(self.grown_to_200(self.committed))
        self.assertEqual(at_200["queries"], at_20["queries"])
        self.assertLess(at_200["bytes"], 1_000_000)

    def test_the_second_page_shows_the_next_rows_and_the_pager(self) -> None:
        grow(self.draft, 120)
        url = reverse("admin:campaigns_campaign_change", args=[self.draft.pk])
        page = self.client.get(url, {"page": 2}).content.decode()
        self.assertIn('id="row-pages"', page)
        self.assertIn("rows 51–100 of 120", page)
        self.assertIn('value="train-v60"', page)  # item 61's stage: row 61 of the table
        self.assertNotIn('value="train-v40"', page)
        self.assertIn('<script id="shared-choices" type="application/json">', page)
