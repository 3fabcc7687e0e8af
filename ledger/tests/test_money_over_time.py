"""Cost accrual per run and the budget stop rule, on the real database (docs/domain.md §18).

A lot-covered run's cost is a share of the lot the ledger already holds: it never adds an entry
or any spend. An hourly run accrues while it runs and posts its cost once when it finishes.
"""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import pytest
from django.test import TestCase
from django.utils import timezone

from campaigns.models import Run, StopRule, Team
from campaigns.tests.factories import (
    as_user,
    committed_campaign,
    ingest_client,
    make_plannable,
    make_user,
)
from ledger.models import EntryKind, LedgerEntry
from ledger.selectors.spend import load_campaign_spend


def _started_hours_ago(run_id: str, hours: float) -> None:
    """The run began `hours` ago (its start: what its hours are measured from)."""
    began = timezone.now() - timedelta(hours=hours)
    Run.objects.filter(run_id=run_id).update(created_at=began, started_at=began)


@pytest.mark.postgres
class LotShareTests(TestCase):
    @classmethod
    def setUpTestData(cls) -> None:
        cls.team = Team.objects.create(name="nlp")
        cls.planner = make_user("pia", team=cls.team)
        # One RTX 4090 lot, 47.14 USD for 72 h: 0.6547 USD per GPU-hour.
        cls.campaign = committed_campaign(cls.team)

    def setUp(self) -> None:
        self.loop = ingest_client(self.campaign)
        self.api = as_user(self.planner)

    def open(self, run_id: str, **body: object) -> dict:
        answer = self.loop.post(
            f"/api/v1/campaigns/{self.campaign.pk}/runs/",
            {"run_id": run_id, **body},
            format="json",
        )
        self.assertEqual(answer.status_code, 201, answer.json())
        return answer.json()

    def test_a_run_takes_gpus_default_one_and_refuses_zero_naming_the_field(self) -> None:
        self.assertEqual(self.open("r-default")["gpus"], 1)
        self.assertEqual(self.open("r-two", gpus=2)["gpus"], 2)
        for bad in (0, -1, "two", 1.5):
            answer = self.loop.post(
                f"/api/v1/campaigns/{self.campaign.pk}/runs/",
                {"run_id": f"r-bad-{bad}", "gpus": bad},
                format="json",
            )
            self.assertEqual(answer.status_code, 400, bad)
            self.assertIn("gpus", answer.json())

    def test_the_same_run_id_on_another_gpu_count_is_another_run(self) -> None:
        self.open("r-again", gpus=2)
        answer = self.loop.post(
            f"/api/v1/campaigns/{self.campaign.pk}/runs/",
            {"run_id": "r-again", "gpus": 4},
            format="json",
        )
        self.assertEqual(answer.status_code, 409, answer.json())

    def test_a_finished_run_costs_its_share_of_the_lot_and_posts_nothing(self) -> None:
        self.open("r-share", gpus=2)
        finished = self.loop.post(
            "/api/v1/runs/r-share/finish/",
            {"status": "completed", "observed_hours": "10"},
            format="json",
        )
        self.assertEqual(finished.status_code, 200, finished.json())
        # 10 h × 2 GPUs × 0.6547 = 13.094 → 13.09.
        self.assertEqual(
            finished.json()["cost_so_far"],
            {"amount": "13.09", "currency": "USD", "basis": "lot_share"},
        )
        shown = self.api.get("/api/v1/runs/r-share/").json()
        self.assertEqual(shown["cost_so_far"]["amount"], "13.09")
        entries = LedgerEntry.objects.filter(campaign=self.campaign)
        self.assertEqual([e.amount for e in entries], [Decimal("47.14")])
        self.assertEqual(load_campaign_spend(self.campaign), Decimal("47.14"))

    def test_each_metric_point_gets_its_cost_for_a_loss_against_money_curve(self) -> None:
        from campaigns.models import MetricPoint
        from campaigns.selectors.run_cost import point_costs

        self.open("r-curve")
        points = [{"name": "loss", "step": s, "value": 3.0 - s / 100} for s in (0, 50, 100)]
        self.loop.post("/api/v1/runs/r-curve/metrics/", {"points": points}, format="json")
        self.loop.post(
            "/api/v1/runs/r-curve/finish/",
            {"status": "completed", "observed_hours": "10"},
            format="json",
        )
        run = Run.objects.get(run_id="r-curve")
        logged = MetricPoint.objects.filter(run=run).order_by("step")
        costs = point_costs(run, [(p.step, p.created_at) for p in logged])
        # 10 h × 0.6547 = 6.55 in all, spread over the 100 steps.
        self.assertEqual(costs, [Decimal("0.00"), Decimal("3.28"), Decimal("6.55")])

    def test_a_running_run_accrues_by_the_wall_clock(self) -> None:
        self.open("r-live")
        _started_hours_ago("r-live", 5)
        shown = self.api.get("/api/v1/runs/r-live/").json()
        # 5 h × 0.6547 = 3.2735 → 3.27 (a second or two of test time does not move a cent).
        self.assertEqual(shown["cost_so_far"]["amount"], "3.27")

    def test_the_budget_rule_stops_a_run_once_the_lots_exceed_the_budget(self) -> None:
        campaign = make_plannable(self.team, title="tight", budget=Decimal("40.00"))
        StopRule.objects.create(campaign=campaign, kind="budget_overrun")
        from campaigns.services.plans import commit_plan
        from catalog.models import RentalPlan

        campaign.lots.create(plan=RentalPlan.objects.get(name="RTX 4090, 3 days"))
        commit_plan(campaign=campaign)
        loop = ingest_client(campaign)
        loop.post(f"/api/v1/campaigns/{campaign.pk}/runs/", {"run_id": "t-1"}, format="json")
        answer = loop.post(
            "/api/v1/runs/t-1/metrics/",
            {"points": [{"name": "loss", "step": 3, "value": 2.5}]},
            format="json",
        )
        self.assertIn(answer.status_code, (200, 201), answer.content)
        run = Run.objects.get(run_id="t-1")
        self.assertEqual(run.status, "stopped")
        self.assertEqual(
            run.stop_reason,
            "budget: spent 47.14 USD is beyond 100% of the budget 40.00 USD by 7.14 USD "
            f"(rule #{run.stop_rule_id}: budget or time overrun)",
        )
        self.assertEqual(run.stop_step, 3)
        self.assertEqual(run.stop_rule.kind, "budget_overrun")


@pytest.mark.postgres
class HourlyTests(TestCase):
    @classmethod
    def setUpTestData(cls) -> None:
        cls.team = Team.objects.create(name="nlp")
        cls.planner = make_user("pia", team=cls.team)
        cls.campaign = committed_campaign(
            cls.team, lots=0, hourly_rate_per_gpu=Decimal("2.00"), budget=Decimal("100.00")
        )

    def setUp(self) -> None:
        self.loop = ingest_client(self.campaign)
        self.api = as_user(self.planner)

    def open(self, run_id: str, **body: object) -> None:
        answer = self.loop.post(
            f"/api/v1/campaigns/{self.campaign.pk}/runs/",
            {"run_id": run_id, **body},
            format="json",
        )
        self.assertEqual(answer.status_code, 201, answer.json())

    def finish(self, run_id: str, hours: str) -> dict:
        answer = self.loop.post(
            f"/api/v1/runs/{run_id}/finish/",
            {"status": "completed", "observed_hours": hours},
            format="json",
        )
        self.assertEqual(answer.status_code, 200, answer.json())
        return answer.json()

    def test_a_finished_hourly_run_posts_its_cost_once_as_a_rental_entry(self) -> None:
        self.open("h-1", gpus=2)
        body = self.finish("h-1", "3")
        self.assertEqual(
            body["cost_so_far"], {"amount": "12.00", "currency": "USD", "basis": "hourly"}
        )
        self.finish("h-1", "3")  # a retried finish answers the same run
        entry = LedgerEntry.objects.get(campaign=self.campaign)
        self.assertEqual((entry.kind, entry.amount, entry.run.run_id), ("rental", 12, "h-1"))
        self.assertEqual(entry.description, "Run h-1: 3 h × 2 GPU × 2.00 USD/GPU-hour")
        self.assertEqual(load_campaign_spend(self.campaign), Decimal("12.00"))

    def test_spend_counts_a_running_run_once_before_and_after_it_posts(self) -> None:
        self.open("h-live")
        _started_hours_ago("h-live", 4)
        self.assertEqual(load_campaign_spend(self.campaign), Decimal("8.00"))
        self.assertFalse(LedgerEntry.objects.filter(campaign=self.campaign).exists())
        self.finish("h-live", "4")
        self.assertEqual(load_campaign_spend(self.campaign), Decimal("8.00"))
        self.assertEqual(
            LedgerEntry.objects.get(campaign=self.campaign, kind=EntryKind.RENTAL).amount, 8
        )

    def test_the_hourly_rate_is_a_money_string_in_the_api(self) -> None:
        draft = make_plannable(self.team, title="next")
        url = f"/api/v1/campaigns/{draft.pk}/"
        refused = self.api.patch(url, {"hourly_rate_per_gpu": 2.5}, format="json")
        self.assertEqual(refused.status_code, 400)
        self.assertIn("hourly_rate_per_gpu", refused.json())
        negative = self.api.patch(url, {"hourly_rate_per_gpu": "-1.00"}, format="json")
        self.assertEqual(negative.status_code, 400)
        taken = self.api.patch(url, {"hourly_rate_per_gpu": "2.50"}, format="json")
        self.assertEqual(taken.status_code, 200, taken.json())
        self.assertEqual(taken.json()["hourly_rate_per_gpu"], "2.50")

    def test_the_budget_rule_stops_a_run_on_hourly_accrual_at_its_fraction(self) -> None:
        campaign = make_plannable(
            self.team, title="capped", hourly_rate_per_gpu=Decimal("2.00"), budget=Decimal("10")
        )
        StopRule.objects.create(campaign=campaign, kind="budget_overrun", threshold=0.8)
        from campaigns.services.plans import commit_plan

        commit_plan(campaign=campaign)
        loop = ingest_client(campaign)
        loop.post(
            f"/api/v1/campaigns/{campaign.pk}/runs/", {"run_id": "c-1", "gpus": 2}, format="json"
        )
        point = {"points": [{"name": "loss", "step": 1, "value": 2.0}]}
        loop.post("/api/v1/runs/c-1/metrics/", point, format="json")
        self.assertEqual(Run.objects.get(run_id="c-1").status, "running")
        _started_hours_ago("c-1", 2.5)  # 2.5 h × 2 GPUs × 2.00 = 10.00 > 80% of 10.00
        loop.post("/api/v1/runs/c-1/metrics/", point, format="json")
        run = Run.objects.get(run_id="c-1")
        self.assertEqual(run.status, "stopped")
        self.assertIn(
            "budget: spent 10.00 USD is beyond 80% of the budget 10.00 USD", run.stop_reason
        )
        refused = loop.post("/api/v1/runs/c-1/metrics/", point, format="json")
        self.assertEqual(refused.status_code, 409)

    def test_a_budget_rule_threshold_is_a_positive_fraction_or_a_400_naming_it(self) -> None:
        draft = make_plannable(self.team, title="rules")
        url = f"/api/v1/campaigns/{draft.pk}/stop-rules/"
        for bad in (0, -0.5, 11):
            answer = self.api.post(url, {"kind": "budget_overrun", "threshold": bad}, format="json")
            self.assertEqual(answer.status_code, 400, (bad, answer.content))
            self.assertIn("threshold", answer.json())
        taken = self.api.post(url, {"kind": "budget_overrun", "threshold": 0.8}, format="json")
        self.assertEqual(taken.status_code, 201, taken.content)

    def test_a_campaign_without_a_budget_rule_is_never_stopped_for_money(self) -> None:
        self.open("h-free")
        _started_hours_ago("h-free", 100)  # 200.00 spent against a 100.00 budget
        self.loop.post(
            "/api/v1/runs/h-free/metrics/",
            {"points": [{"name": "loss", "step": 1, "value": 2.0}]},
            format="json",
        )
        self.assertEqual(Run.objects.get(run_id="h-free").status, "running")


@pytest.mark.postgres
class SpendOverTimeTests(TestCase):
    @classmethod
    def setUpTestData(cls) -> None:
        cls.team = Team.objects.create(name="nlp")
        cls.other = Team.objects.create(name="vision")
        cls.viewer = make_user("vic", team=cls.team, role="viewer")
        cls.outsider = make_user("otto", team=cls.other)
        cls.lots = committed_campaign(cls.team)
        cls.hourly = committed_campaign(
            cls.team,
            lots=0,
            title="hourly",
            hourly_rate_per_gpu=Decimal("2.00"),
            budget=Decimal("50.00"),
        )

    def test_a_lot_campaign_spends_its_lots_and_burns_nothing_more(self) -> None:
        ingest_client(self.lots).post(
            f"/api/v1/campaigns/{self.lots.pk}/runs/", {"run_id": "l-1", "gpus": 1}, format="json"
        )
        _started_hours_ago("l-1", 6)
        body = as_user(self.viewer).get(f"/api/v1/campaigns/{self.lots.pk}/spend/").json()
        self.assertEqual([p["cumulative"] for p in body["series"]], ["47.14", "47.14"])
        self.assertEqual((body["spent"], body["budget"]), ("47.14", "110.00"))
        self.assertEqual(body["burn_rate_per_hour"], "0.00")
        self.assertEqual(body["projection"]["amount"], "47.14")
        self.assertIn("paid up front", body["projection"]["uncertainty"])
        [lot] = body["lots"]
        self.assertEqual(lot["start"], self.lots.committed_at.isoformat())
        self.assertAlmostEqual(float(lot["hours_left"]), 72, delta=0.05)
        self.assertAlmostEqual(float(body["window_hours_left"]), 72, delta=0.05)

    def test_an_hourly_campaign_accrues_a_running_run_and_projects_it(self) -> None:
        loop = ingest_client(self.hourly)
        for run_id in ("h-a", "h-b"):
            loop.post(
                f"/api/v1/campaigns/{self.hourly.pk}/runs/",
                {"run_id": run_id, "gpus": 2},
                format="json",
            )
        _started_hours_ago("h-a", 3)
        loop.post(
            "/api/v1/runs/h-a/finish/",
            {"status": "completed", "observed_hours": "3"},
            format="json",
        )
        _started_hours_ago("h-b", 1)
        body = as_user(self.viewer).get(f"/api/v1/campaigns/{self.hourly.pk}/spend/").json()
        # h-a posted 12.00 to the ledger; h-b accrues 1 h × 2 GPUs × 2.00 = 4.00 on top.
        self.assertEqual([p["cumulative"] for p in body["series"]], ["12.00", "16.00"])
        self.assertEqual(body["burn_rate_per_hour"], "4.00")
        projection = body["projection"]
        self.assertEqual(projection["low"], "16.00")
        self.assertGreater(Decimal(projection["amount"]), Decimal("16.00"))
        self.assertLessEqual(Decimal(projection["amount"]), Decimal(projection["high"]))
        self.assertEqual(body["lots"], [])

    def test_another_teams_campaign_is_not_found_and_ingest_keys_are_refused(self) -> None:
        url = f"/api/v1/campaigns/{self.lots.pk}/spend/"
        self.assertEqual(as_user(self.outsider).get(url).status_code, 404)
        self.assertIn(ingest_client(self.lots).get(url).status_code, (401, 403))

    def test_the_campaign_page_draws_the_burn_down_with_its_budget_line(self) -> None:
        from django.urls import reverse

        self.client.force_login(self.viewer)
        page = self.client.get(reverse("admin:campaigns_campaign_change", args=[self.lots.pk]))
        self.assertEqual(page.status_code, 200)
        html = page.content.decode()
        self.assertIn('id="spend-chart"', html)
        self.assertIn('class="budget"', html)
        self.assertIn("spent 47.14 USD of a 110.00 USD budget", html)

    def test_the_campaign_page_lists_the_open_alerts(self) -> None:
        from django.urls import reverse

        from ledger.models import Alert

        Alert.objects.create(campaign=self.lots, kind="budget", key="budget:80", message="80%!")
        Alert.objects.create(
            campaign=self.lots,
            kind="run_silent",
            key="run:x",
            message="old news",
            resolved_at=timezone.now(),
        )
        self.client.force_login(self.viewer)
        html = self.client.get(
            reverse("admin:campaigns_campaign_change", args=[self.lots.pk])
        ).content.decode()
        self.assertIn('id="campaign-alerts"', html)
        self.assertIn("80%!", html)
        self.assertNotIn("old news", html)


@pytest.mark.postgres
class DemoHistoryTests(TestCase):
    def test_the_demo_with_history_shows_a_calibrated_estimate_and_a_spend_chart(self) -> None:
        from io import StringIO

        from django.core.management import call_command
        from django.urls import reverse

        from campaigns.models import Campaign
        from estimates.forecasts import compute_forecast

        call_command("load_demo", "--history", stdout=StringIO())
        call_command("load_demo", "--history", stdout=StringIO())  # idempotent
        demo = Campaign.objects.get(team__name="demo", title__startswith="Baseline vs")
        self.assertEqual(Campaign.objects.filter(team__name="demo").count(), 4)
        forecast = compute_forecast(demo).as_json()
        self.assertEqual(forecast["time_source"], "calibrated")
        self.assertTrue(forecast["calibration"])
        self.assertEqual(forecast["calibration"][0]["median_ratio"], 1.25)
        earlier = Campaign.objects.get(title="Earlier: LoRA rank 8 on last quarter")
        self.client.force_login(get_user("demo"))
        page = self.client.get(reverse("admin:campaigns_campaign_change", args=[earlier.pk]))
        self.assertContains(page, 'id="spend-chart"')
        self.assertContains(page, "spent 50.64 USD of a 60.00 USD budget")


def get_user(username: str):  # type: ignore[no-untyped-def]
    from django.contrib.auth import get_user_model

    return get_user_model().objects.get(username=username)


@pytest.mark.postgres
class ReportSpendTests(TestCase):
    def test_the_closing_report_carries_the_spend_series_and_draws_it(self) -> None:
        from ledger.rendering.closing_report import render_html
        from ledger.selectors.closing_report import collect

        campaign = committed_campaign(Team.objects.create(name="nlp"))
        data = collect(campaign)
        self.assertEqual([p["cumulative"] for p in data["spend"]["series"]][-1], "47.14")
        self.assertEqual(data["spend"]["budget"], "110.00")
        html = render_html(data)
        self.assertIn('id="spend-chart"', html)
        self.assertIn("spent 47.14 USD of a 110.00 USD budget", html)
        del data["spend"]  # a report stored before the section still renders
        self.assertNotIn('id="spend-chart"', render_html(data))
