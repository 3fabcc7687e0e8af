"""The campaign admin page's SQL queries do not grow with its items (bench/campaign_page)."""

from __future__ import annotations

from decimal import Decimal

from django.db import connection
from django.test import TestCase
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from campaigns.models import Campaign, PlannedItem, Stage, Team
from campaigns.tests.factories import make_plannable, make_user


def grow(campaign: Campaign, items: int) -> None:
    """Add items, each with a training stage, until the campaign has ``items`` of them."""
    have = campaign.items.count()
    for i in range(have, items):
        item = PlannedItem.objects.create(
            campaign=campaign, name=f"v{i}", planned_hours=Decimal("2"), rationale="r"
        )
        Stage.objects.create(
            campaign=campaign,
            name=f"train-{i}",
            kind="training",
            variant=item,
            planned_hours=Decimal("2"),
            resource="gpu-0",
        )


class CampaignPageQueries(TestCase):
    @classmethod
    def setUpTestData(cls) -> None:
        cls.team = Team.objects.create(name="nlp")
        cls.planner = make_user("pia", team=cls.team, role="planner")
        cls.campaign = make_plannable(cls.team)

    def queries(self) -> int:
        url = reverse("admin:campaigns_campaign_change", args=[self.campaign.pk])
        with CaptureQueriesContext(connection) as captured:
            page = self.client.get(url)
        self.assertEqual(page.status_code, 200)
        return len(captured)

    def test_the_number_of_queries_is_the_same_for_5_and_15_items(self) -> None:
        self.client.force_login(self.planner)
        grow(self.campaign, 5)
        self.queries()  # warm the session and content-type caches
        five = self.queries()
        grow(self.campaign, 15)
        fifteen = self.queries()
        self.assertEqual(fifteen, five)
