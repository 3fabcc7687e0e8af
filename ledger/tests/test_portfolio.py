"""The team's portfolio page (docs/domain.md §22.5): every campaign in one table, the period's
burn-down against the allowance, a query count that does not grow with the campaigns."""

from __future__ import annotations

from decimal import Decimal

from django.db import connection
from django.test import TestCase
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from campaigns.models import Campaign, Team
from campaigns.tests.factories import grow_plan, make_campaign, make_run, make_user
from ledger.domain import team_budget as tb
from ledger.models import Deliverable, LedgerEntry
from ledger.services.team_budget import set_allowance


def add_campaigns(team: Team, count: int, start: int = 0) -> None:
    for n in range(start, start + count):
        campaign = make_campaign(team, title=f"campaign {n}", status="committed",
                                 committed_at=timezone.now())  # fmt: skip
        LedgerEntry.objects.bulk_create(
            [
                LedgerEntry(campaign=campaign, kind="rental", description="lot",
                            amount=Decimal("40.00"), currency="USD"),
                LedgerEntry(campaign=campaign, kind="external", description="labels",
                            amount=Decimal("5.00"), currency="USD"),
            ]
        )  # fmt: skip
        if n % 2 == 0:
            Deliverable.objects.create(campaign=campaign, kind="predictions", corpus_name="t",
                                       corpus_revision="r1", accepted=True)  # fmt: skip


class PortfolioTests(TestCase):
    @classmethod
    def setUpTestData(cls) -> None:
        cls.team = Team.objects.create(name="desk-a")
        cls.viewer = make_user("vera", team=cls.team, role="viewer")
        cls.stranger = make_user("sam", team=Team.objects.create(name="desk-b"))
        start = tb.period_bounds("quarter", timezone.now().date())[0]
        set_allowance(team=cls.team, period_kind="quarter", period_start=start.date(),
                      amount=Decimal("1000.00"), currency="USD")  # fmt: skip

    def page(self):  # type: ignore[no-untyped-def]
        self.client.force_login(self.viewer)
        return self.client.get(reverse("admin:campaigns_team_portfolio", args=[self.team.pk]))

    def test_the_table_and_the_chart(self) -> None:
        add_campaigns(self.team, 2)
        answer = self.page()
        self.assertEqual(answer.status_code, 200)
        rows = answer.context["rows"]
        self.assertEqual([r.title for r in rows], ["campaign 1", "campaign 0"])
        by_title = {r.title: r for r in rows}
        self.assertEqual(by_title["campaign 0"].cost_per_accepted, Decimal("40.00"))
        self.assertIsNone(by_title["campaign 1"].cost_per_accepted)
        self.assertEqual(by_title["campaign 0"].spent, Decimal("40.00"))
        self.assertEqual(by_title["campaign 0"].external, Decimal("5.00"))
        self.assertContains(answer, "undefined")
        self.assertContains(answer, 'id="portfolio-chart"')
        self.assertContains(answer, "<svg")
        self.assertContains(answer, "spent 80.00, committed 0.00, forecast 80.00")
        self.assertContains(answer, reverse("admin:campaigns_campaign_change", args=[rows[0].id]))
        team_page = self.client.get(reverse("admin:campaigns_team_change", args=[self.team.pk]))
        self.assertContains(team_page, 'id="team-portfolio-link"')
        self.client.force_login(self.stranger)
        self.assertEqual(
            self.client.get(
                reverse("admin:campaigns_team_portfolio", args=[self.team.pk])
            ).status_code,
            404,
        )

    def test_two_accepted_deliverables_on_one_corpus_count_once_and_the_header_says_so(
        self,
    ) -> None:
        add_campaigns(self.team, 1)
        campaign = self.team.campaigns.get()
        Deliverable.objects.create(
            campaign=campaign,
            kind="error_analysis",
            corpus_name="t",
            corpus_revision="r1",
            accepted=True,
        )
        answer = self.page()
        self.assertEqual(answer.context["rows"][0].cost_per_accepted, Decimal("40.00"))
        self.assertContains(answer, "Cost per accepted deliverable (distinct corpora)")

    def test_the_query_count_does_not_grow_with_the_campaigns(self) -> None:
        add_campaigns(self.team, 5)
        self.page()  # warm: sessions, content types
        with CaptureQueriesContext(connection) as five:
            self.assertEqual(len(self.page().context["rows"]), 5)
        add_campaigns(self.team, 45, start=5)
        with CaptureQueriesContext(connection) as fifty:
            self.assertEqual(len(self.page().context["rows"]), 50)
        self.assertEqual(len(five), len(fifty), [q["sql"][:90] for q in fifty.captured_queries])

    def test_the_query_count_does_not_grow_with_the_campaigns_items_and_runs(self) -> None:
        add_campaigns(self.team, 3)
        self.page()  # warm: sessions, content types
        with CaptureQueriesContext(connection) as small:
            self.page()
        for campaign in Campaign.objects.filter(team=self.team):
            grow_plan(campaign, 40)
            for n in range(10):
                make_run(campaign, f"{campaign.pk}-run-{n}", variant=campaign.items.first())
        with CaptureQueriesContext(connection) as large:
            self.page()
        self.assertEqual(len(small), len(large), [q["sql"][:90] for q in large.captured_queries])
