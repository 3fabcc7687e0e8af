"""Team budgets on the real database (docs/domain.md §22): a team with a quarterly allowance,
three campaigns committed across two quarters, the budget answer computed by hand, and the
over-budget commit refused (409 naming the figures) then acknowledged."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal
from unittest import mock

import pytest
from django.db import connection
from django.test import TestCase
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from campaigns.models import Campaign, CommitOverTeamBudget, Team
from campaigns.services.plans import commit_plan
from campaigns.tests.factories import as_user, make_plannable, make_user
from catalog.models import RentalPlan
from catalog.services import seed_catalog
from ledger import services, tasks
from ledger.domain import team_budget as tb
from ledger.models import Alert, AlertChannel, AlertDelivery, TeamAllowance
from ledger.selectors import team_budget as budgets
from ledger.services.team_budget import set_allowance
from ledger.services.team_budget_alerts import store_team_budget_alerts

LOT = "IteraGPU", "RTX 4090, 3 days"  # 47.14 USD, 72 h, one GPU


def _with_lot(team: Team, title: str, start, quantity: int = 1) -> Campaign:  # type: ignore[no-untyped-def]
    campaign = make_plannable(team, title=title)
    if not RentalPlan.objects.filter(provider=LOT[0], name=LOT[1]).exists():
        seed_catalog()
    plan = RentalPlan.objects.get(provider=LOT[0], name=LOT[1])
    campaign.lots.create(plan=plan, quantity=quantity, start=start)
    return campaign


@pytest.mark.postgres
class TeamBudgetTests(TestCase):
    @classmethod
    def setUpTestData(cls) -> None:
        cls.team = Team.objects.create(name="desk-a")
        cls.other = Team.objects.create(name="desk-b")
        cls.owner = make_user("olga", team=cls.team, role="owner")
        cls.stranger = make_user("sam", team=cls.other, role="owner")
        now = timezone.now()
        kind, this_start = "quarter", tb.period_bounds("quarter", now.date())[0]
        cls.this_q = this_start
        cls.next_q = tb.period_bounds(kind, (this_start + timedelta(days=100)).date())[0]
        set_allowance(
            team=cls.team,
            period_kind=kind,
            period_start=this_start.date(),
            amount=Decimal("100.00"),
            currency="USD",
        )
        set_allowance(
            team=cls.team,
            period_kind=kind,
            period_start=cls.next_q.date(),
            amount=Decimal("100.00"),
            currency="USD",
            gpu_hours=Decimal("200"),
        )

    def setUp(self) -> None:
        self.api = as_user(self.owner)

    def commit(self, campaign: Campaign, **body: object):  # type: ignore[no-untyped-def]
        return self.api.post(f"/api/v1/campaigns/{campaign.pk}/commit/", body, format="json")

    def test_three_campaigns_across_two_quarters_by_hand(self) -> None:
        first = _with_lot(self.team, "first", self.this_q + timedelta(days=5))
        second = _with_lot(self.team, "second", self.this_q + timedelta(days=20))
        third = _with_lot(self.team, "third", self.next_q + timedelta(days=10), quantity=2)
        self.assertEqual(self.commit(first).status_code, 200)
        services.post_entry(
            campaign=first,
            kind="included",
            description="storage",
            amount=Decimal("10.00"),
            currency="USD",
        )
        services.post_entry(
            campaign=first,
            kind="external",
            description="annotators",
            amount=Decimal("500.00"),
            currency="USD",
        )

        # 47.14 + 10.00 spent so far; the second lot would make 104.28 > 100.00.
        refused = self.commit(second)
        self.assertEqual(refused.status_code, 409, refused.json())
        body = refused.json()
        self.assertIn("forecast 104.28 USD of a 100.00 USD allowance", body["detail"])
        [period] = body["over_team_budget"]
        self.assertEqual(period["money"]["forecast"], "104.28")
        self.assertEqual(period["money"]["committed"], "94.28")
        second.refresh_from_db()
        self.assertEqual(second.status, "draft")
        self.assertFalse(second.ledger.exists())  # the refusal rolled back whole

        self.assertEqual(self.commit(second, over_team_budget=True).status_code, 200)
        # 2 × 47.14 = 94.28 in the next quarter: within its 100.00.
        self.assertEqual(self.commit(third).status_code, 200)

        answer = self.api.get(f"/api/v1/teams/{self.team.pk}/budget/")
        self.assertEqual(answer.status_code, 200)
        this, following = answer.json()["periods"]
        self.assertEqual(this["period"], tb.period_label("quarter", self.this_q.date()))
        self.assertEqual(
            this["money"],
            {
                "allowance": "100.00",
                "spent": "10.00",
                "committed": "94.28",
                "forecast": "104.28",
                "left": "-4.28",
                "burn_per_hour": "0.00",
            },
        )
        self.assertTrue(this["forecast_exceeds_allowance"])
        self.assertIsNotNone(this["run_out_at"])  # already run out: now
        self.assertEqual(
            following["money"],
            {
                "allowance": "100.00",
                "spent": "0.00",
                "committed": "94.28",
                "forecast": "94.28",
                "left": "5.72",
                "burn_per_hour": "0.00",
            },
        )
        # 2 lots × 72 h × 1 GPU
        self.assertEqual(following["gpu_hours"]["committed"], "144.00")
        self.assertEqual(following["gpu_hours"]["left"], "56.00")
        self.assertIsNone(following["run_out_at"])
        self.assertFalse(following["forecast_exceeds_allowance"])

        # Another team's budget is a 404.
        self.assertEqual(
            as_user(self.stranger).get(f"/api/v1/teams/{self.team.pk}/budget/").status_code,
            404,
        )

        # The alert: the current quarter's forecast passes its allowance.
        [alert] = store_team_budget_alerts(team_id=self.team.pk)
        self.assertEqual(alert.kind, "team_budget")
        self.assertIn("104.28", alert.message)
        self.assertEqual(store_team_budget_alerts(team_id=self.team.pk), [])  # stored once

    def test_the_service_refuses_and_the_acknowledgement_commits(self) -> None:
        big = _with_lot(self.team, "big", self.this_q + timedelta(days=1), quantity=3)
        with self.assertRaises(CommitOverTeamBudget) as caught:
            commit_plan(campaign=big, acting_user=self.owner)
        self.assertIn("141.42", str(caught.exception))
        commit_plan(campaign=big, acting_user=self.owner, over_team_budget=True)
        big.refresh_from_db()
        self.assertEqual(big.status, "committed")

    def test_the_periodic_scan_raises_the_alert_once_and_enqueues_its_delivery(self) -> None:
        big = _with_lot(self.team, "big", self.this_q + timedelta(days=1), quantity=3)
        commit_plan(campaign=big, acting_user=self.owner, over_team_budget=True)
        AlertChannel.objects.create(team=self.team, kind="email", name="Owners")
        with (
            mock.patch.object(tasks.deliver_alerts, "delay") as delay,
            self.captureOnCommitCallbacks(execute=True),
        ):
            self.assertEqual(tasks.scan_team_budgets(), 1)
            self.assertEqual(tasks.scan_team_budgets(), 0)  # the open alert is not raised again
        [alert] = Alert.objects.filter(kind="team_budget", campaign=big)
        # Its outbox row (the finding: 5 team-budget alerts, 0 rows), and a worker woken.
        self.assertEqual(AlertDelivery.objects.filter(alert=alert).count(), 1)
        delay.assert_called_once_with()

    def test_the_facts_load_in_a_constant_number_of_queries(self) -> None:
        for i in range(3):
            commit_plan(campaign=_with_lot(self.other, f"c{i}", self.this_q), acting_user=None)
        with CaptureQueriesContext(connection) as few:
            budgets.team_facts(self.other.pk)
        for i in range(3, 12):
            commit_plan(campaign=_with_lot(self.other, f"c{i}", self.this_q), acting_user=None)
        with CaptureQueriesContext(connection) as many:
            budgets.team_facts(self.other.pk)
        self.assertEqual(len(few), len(many))
        self.assertLessEqual(len(many), 5)

    def test_an_allowance_refuses_a_mid_quarter_start_naming_the_field(self) -> None:
        from django.core.exceptions import ValidationError

        with self.assertRaises(ValidationError) as caught:
            set_allowance(
                team=self.team,
                period_kind="quarter",
                period_start=(self.this_q + timedelta(days=31)).date(),
                amount=Decimal("1"),
                currency="USD",
            )
        self.assertIn("period_start", caught.exception.message_dict)
        with self.assertRaises(ValidationError) as caught:
            set_allowance(team=self.team, period_kind="month", period_start=self.this_q.date())
        self.assertIn("amount", caught.exception.message_dict)
        self.assertEqual(TeamAllowance.objects.filter(team=self.team).count(), 2)


@pytest.mark.postgres
class AdminCommitOverTeamBudgetTests(TestCase):
    def test_the_commit_page_asks_for_the_acknowledgement(self) -> None:
        from django.urls import reverse

        team = Team.objects.create(name="desk-c")
        owner = make_user("oona", team=team, role="owner")
        start = tb.period_bounds("month", timezone.now().date())[0]
        set_allowance(
            team=team,
            period_kind="month",
            period_start=start.date(),
            amount=Decimal("40.00"),
            currency="USD",
        )
        campaign = _with_lot(team, "over", start + timedelta(hours=1))
        self.client.force_login(owner)
        url = reverse("admin:campaigns_campaign_commit", args=[campaign.pk])
        page = self.client.get(url)
        self.assertContains(page, 'id="ack-over-team-budget"')
        self.assertContains(page, "forecast 47.14 USD of a 40.00 USD allowance")
        refused = self.client.post(url, {"confirm": "yes"}, follow=True)
        self.assertContains(refused, "would take the team over its budget")
        campaign.refresh_from_db()
        self.assertEqual(campaign.status, "draft")
        self.client.post(url, {"confirm": "yes", "over_team_budget": "yes"})
        campaign.refresh_from_db()
        self.assertEqual(campaign.status, "committed")
