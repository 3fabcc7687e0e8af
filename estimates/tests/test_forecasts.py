"""Forecasts: the endpoint, what the forecast says, and how it is kept fresh (stale marks,
versioned recomputes, the sweep). Recomputes run inline here; test_worker.py runs them on a
real Celery worker."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal
from typing import Any
from unittest import mock

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction
from django.test import TestCase
from django.urls import reverse
from django.utils import timezone

from campaigns.enqueue import OnCommitEnqueue
from campaigns.models import (
    Campaign,
    PlannedItem,
    Run,
    RunKind,
    RunStatus,
    Stage,
    Team,
)
from campaigns.services.campaigns import update_campaign
from campaigns.services.decisions import record_decision
from campaigns.services.items import amend_item, create_item
from campaigns.services.keys import issue_ingest_key
from campaigns.services.plans import commit_plan
from campaigns.services.stages import change_stage
from campaigns.tests.factories import celery_eager, make_plannable, make_user, pilot, token_header
from catalog.models import GpuModel, RentalPlan
from catalog.services import seed_catalog
from estimates import forecasts
from estimates.forecasts import (
    compute_forecast,
    ensure_forecast,
    forecast_panel_html,
    recompute,
)
from estimates.models import Estimate
from estimates.services import mark_stale
from estimates.tasks import recompute_forecast, sweep_stale_estimates
from estimates.tests.support import (
    CommittedTestData,
    grow_seed_by_30_hours_with_an_exploratory_item,
    load_seed,
)

SEVEN_DAY_ADVICE = (
    "78 h exceeds the 3-day lot by 6 h: the 7-day lot costs 110.00 USD; "
    "or cut the exploratory item X (\u221212 h) and keep the 3-day lot at 47.14 USD."
)


def forecast_url(campaign: Campaign) -> str:
    return f"/api/v1/campaigns/{campaign.pk}/forecast/"


def campaign_row(campaign: Campaign) -> Estimate:
    return Estimate.objects.get(campaign=campaign, item__isnull=True)


def enqueued(callbacks: list[Any]) -> list[tuple[int, int]]:
    """The (campaign, version) of each recompute enqueued after the commit."""
    return [
        c.args
        for c in callbacks
        if isinstance(c, OnCommitEnqueue) and c.task.name == recompute_forecast.name
    ]


class ForecastEndpointTests(TestCase):
    seed: Any
    team: Any
    member: Any
    other_team: Any
    outsider: Any
    ingest_key: Any

    @classmethod
    def setUpTestData(cls) -> None:
        seed_catalog()
        cls.seed = load_seed()
        cls.team = cls.seed.team
        cls.member = make_user("mia", team=cls.team, role="viewer")
        cls.other_team = Team.objects.create(name="vision")
        cls.outsider = make_user("otto", team=cls.other_team, role="owner")
        _key, cls.ingest_key = issue_ingest_key(campaign=cls.seed)

    def get(self, campaign: Campaign, user: Any = None) -> Any:
        return self.client.get(forecast_url(campaign), **token_header(user or self.member))

    def test_another_teams_campaign_answers_404(self) -> None:
        self.assertEqual(self.get(self.seed, user=self.outsider).status_code, 404)
        self.assertFalse(Estimate.objects.filter(campaign=self.seed, computed_at__isnull=False))

    def test_an_unknown_campaign_answers_404(self) -> None:
        self.assertEqual(self.client.get("/api/v1/campaigns/999999/forecast/").status_code, 401)
        missing = self.client.get("/api/v1/campaigns/999999/forecast/", **token_header(self.member))
        self.assertEqual(missing.status_code, 404)

    def test_an_ingest_key_may_not_read_the_forecast_even_of_its_own_campaign(self) -> None:
        answer = self.client.get(
            forecast_url(self.seed), HTTP_AUTHORIZATION=f"Bearer {self.ingest_key}"
        )
        self.assertEqual(answer.status_code, 403)

    def test_the_first_read_computes_the_seed_forecast_48_h_fitting_72_h(self) -> None:
        answer = self.get(self.seed)
        self.assertEqual(answer.status_code, 200, answer.content)
        body = answer.json()
        self.assertEqual(body["status"], "fresh")
        self.assertFalse(body["stale"])
        self.assertIsNotNone(body["computed_at"])
        self.assertEqual(body["computed_version"], body["input_version"])
        self.assertEqual(body["time_source"], "assumed")
        self.assertEqual(
            (body["reserved_hours"], body["forecast_hours"], body["observed_hours"]),
            (48.0, 48.0, 0.0),
        )
        self.assertTrue(body["fits_in_window"])
        self.assertEqual(body["uncommitted_hours"], 24.0)
        self.assertEqual(len(body["items"]), 5)
        baseline = next(i for i in body["items"] if i["role"] == "baseline")
        self.assertEqual(
            (baseline["reserved_hours"], baseline["forecast_hours"], baseline["observed_hours"]),
            (10.0, 10.0, None),
        )
        self.assertEqual(body["lots"]["advised_total"], "47.14")
        self.assertIn("The calendar takes 48 h of a 72 h window: 24 h to spare.", body["advice"][0])
        # It was persisted: one row for the campaign and one per item.
        self.assertEqual(Estimate.objects.filter(campaign=self.seed).count(), 6)

    def test_the_seed_grown_to_78_h_is_advised_the_7_day_lot_or_cutting_x(self) -> None:
        grow_seed_by_30_hours_with_an_exploratory_item(self.seed)
        body = self.get(self.seed).json()
        self.assertEqual(body["forecast_hours"], 78.0)
        self.assertFalse(body["fits_in_window"])
        self.assertEqual(body["over_hours"], 6.0)
        self.assertIn(SEVEN_DAY_ADVICE, body["advice"])
        self.assertEqual(body["lots"]["advised_total"], "110.00")
        self.assertEqual([lot["duration_hours"] for lot in body["lots"]["advised"]], [168.0])
        self.assertEqual(body["lots"]["cut_options"][0]["items"], ["X"])
        self.assertIn(
            "The reserved lots cost 47.14 USD; the forecast needs 110.00 USD of lots, "
            "62.86 USD more.",
            body["advice"],
        )

    def test_a_stale_forecast_is_served_as_it_was_and_says_it_is_stale(self) -> None:
        self.get(self.seed)
        Stage.objects.filter(campaign=self.seed, name="Train baseline").update(
            planned_hours=Decimal("40")
        )
        mark_stale(self.seed.pk)
        body = self.get(self.seed).json()
        self.assertEqual(body["status"], "stale")
        self.assertTrue(body["stale"])
        self.assertIsNotNone(body["stale_since"])
        self.assertGreater(body["input_version"], body["computed_version"])
        self.assertEqual(body["forecast_hours"], 48.0)  # the last computed figure, said stale


class SeedPilotTests(CommittedTestData, TestCase):
    """The demo campaign committed, then pilots measure half the assumed throughput."""

    seed: Any
    member: Any
    trained: Any

    @classmethod
    def setUpTestData(cls) -> None:
        seed_catalog()
        cls.seed = load_seed()
        cls.member = make_user("mia", team=cls.seed.team, role="planner")
        cls.trained = list(cls.seed.items.filter(role__in=["baseline", "variant"]).order_by("id"))
        for item in cls.trained:
            item.config = {**item.config, "assumed_tokens_per_second": 2000}
            item.save()
        commit_plan(campaign=cls.seed)
        ensure_forecast(campaign=cls.seed)  # fresh, assumed, before any pilot

    def test_a_pilot_throughput_marks_the_forecast_stale_and_enqueues_one_recompute(self) -> None:
        before = campaign_row(self.seed)
        self.assertEqual((before.status, before.time_source), ("fresh", "assumed"))
        with self.captureOnCommitCallbacks() as callbacks:
            pilot(self.trained[0], tokens_per_second=1000)
        stale = campaign_row(self.seed)
        self.assertEqual(stale.status, "stale")
        self.assertIsNotNone(stale.stale_since)
        self.assertEqual(stale.input_version, before.input_version + 1)
        self.assertEqual(stale.computed_version, before.computed_version)
        self.assertEqual(enqueued(callbacks), [(self.seed.pk, stale.input_version)])
        item_rows = Estimate.objects.filter(campaign=self.seed, item__isnull=False)
        self.assertEqual({r.status for r in item_rows}, {"stale"})

    def test_the_recompute_switches_the_time_source_to_the_pilot(self) -> None:
        with self.captureOnCommitCallbacks() as callbacks:
            pilot(self.trained[0], tokens_per_second=1000)
        with celery_eager():
            for callback in callbacks:
                callback()
        row = campaign_row(self.seed)
        self.assertEqual((row.status, row.time_source), ("fresh", "pilot"))
        self.assertEqual(row.computed_version, row.input_version)
        item = Estimate.objects.get(item=self.trained[0])
        self.assertEqual(item.time_source, "pilot")
        self.assertEqual(item.outputs["forecast_hours"], 20.0)
        self.assertEqual(item.inputs["pilot"]["tokens_per_second"], 1000)
        untouched = Estimate.objects.get(item=self.trained[1])
        self.assertEqual(
            (untouched.time_source, untouched.outputs["forecast_hours"]), ("assumed", 10.0)
        )

    def test_pilots_at_half_speed_grow_48_h_to_78_h_and_the_forecast_advises_the_7_day_lot(
        self,
    ) -> None:
        for item in self.trained:
            pilot(item, tokens_per_second=1000)
        mark_stale(self.seed.pk)
        with celery_eager():
            recompute(self.seed.pk, campaign_row(self.seed).input_version)
        body = self.client.get(forecast_url(self.seed), **token_header(self.member)).json()
        self.assertEqual(body["time_source"], "pilot")
        self.assertEqual(body["reserved_basis"], "baseline")
        self.assertEqual((body["reserved_hours"], body["forecast_hours"]), (48.0, 78.0))
        self.assertIn("The machine time of 48 h grows by 30 h to 78 h.", body["advice"])
        self.assertIn(
            "78 h exceeds the 3-day lot by 6 h: the 7-day lot costs 110.00 USD; or cut the useful "
            "item Variant B: LoRA rank 64 (\u221220 h) and keep the 3-day lot at 47.14 USD.",
            body["advice"],
        )
        reserved = {i["name"]: i["reserved_hours"] for i in body["items"]}
        self.assertEqual(reserved["Variant A: LoRA rank 16"], 10.0)

    def test_an_amendment_after_commit_moves_the_forecast_but_not_the_reserved_hours(
        self,
    ) -> None:
        variant_a = PlannedItem.objects.get(pk=self.trained[1].pk)
        amend_item(item=variant_a, reason="longer schedule", planned_hours=Decimal("15"))
        recompute(self.seed.pk, campaign_row(self.seed).input_version)
        outputs = campaign_row(self.seed).outputs
        self.assertEqual(outputs["totals"]["reserved_hours"], 48.0)
        self.assertEqual(outputs["totals"]["forecast_hours"], 53.0)
        row = next(i for i in outputs["items"] if i["id"] == variant_a.pk)
        self.assertEqual((row["reserved_hours"], row["forecast_hours"]), (10.0, 15.0))

    def test_a_cut_item_drops_its_stage_from_the_forecast(self) -> None:
        for item in self.trained:
            pilot(item, tokens_per_second=1000)
        variant_b = self.trained[2]
        record_decision(
            campaign=self.seed, outcome="cut", rationale="A is enough", cut_variants=[variant_b]
        )
        mark_stale(self.seed.pk)
        recompute(self.seed.pk, campaign_row(self.seed).input_version)
        outputs = campaign_row(self.seed).outputs
        self.assertEqual(outputs["totals"]["forecast_hours"], 58.0)
        self.assertTrue(outputs["fits_in_window"])
        cut = next(i for i in outputs["items"] if i["id"] == variant_b.pk)
        self.assertEqual((cut["status"], cut["forecast_hours"]), ("cut", 0.0))


class ForecastRulesTests(TestCase):
    team: Any
    campaign: Any
    baseline: Any
    variant: Any

    @classmethod
    def setUpTestData(cls) -> None:
        seed_catalog()
        cls.team = Team.objects.create(name="nlp")
        cls.campaign = make_plannable(cls.team)
        cls.baseline = cls.campaign.items.get(name="baseline")
        cls.variant = cls.campaign.items.get(name="variant A")

    def item(self, forecast: forecasts.Forecast, item: PlannedItem) -> forecasts.ItemForecast:
        return next(i for i in forecast.items if i.id == item.pk)

    def test_a_pilot_with_the_work_in_the_config_gives_work_over_throughput(self) -> None:
        # 7.2e7 tokens x 2 epochs at 1,000 tokens/s on 1 GPU, run on 2 GPUs: 20 h.
        self.baseline.config = {"tokens": 7.2e7, "epochs": 2, "gpus": 2}
        self.baseline.save()
        pilot(self.baseline, tokens_per_second=1000, gpus=1)
        result = self.item(compute_forecast(self.campaign), self.baseline)
        self.assertEqual(result.time_source, "pilot")
        self.assertAlmostEqual(result.forecast_hours, 20.0)
        self.assertIn("the pilot measured 1,000 tokens/s on 1 GPU", result.note)

    def test_a_pilot_without_work_or_assumed_throughput_keeps_the_planned_hours_and_says_so(
        self,
    ) -> None:
        pilot(self.variant, tokens_per_second=1000)
        forecast = compute_forecast(self.campaign)
        result = self.item(forecast, self.variant)
        self.assertEqual((result.time_source, result.forecast_hours), ("assumed", 12.0))
        self.assertIn("the planned 12 h are kept", result.note)
        self.assertTrue(any("the planned 12 h are kept" in line for line in forecast.advice))

    def test_observed_hours_come_from_runs_and_stages_and_a_finished_run_replaces_the_plan(
        self,
    ) -> None:
        Run.objects.create(
            team=self.team,
            campaign=self.campaign,
            run_id="full-1",
            variant=self.baseline,
            kind=RunKind.FULL,
            config={},
            config_digest="0" * 64,
            status=RunStatus.COMPLETED,
            observed_hours=Decimal("13.5"),
        )
        forecast = compute_forecast(self.campaign)
        result = self.item(forecast, self.baseline)
        self.assertEqual((result.time_source, result.forecast_hours), ("observed", 13.5))
        self.assertEqual(result.observed_hours, 13.5)
        self.assertEqual(forecast.observed_hours, 13.5)
        # The stage "train" holds both items (22 h); the baseline's item is not staged, so the
        # stage keeps its plan until the stage itself is observed.
        Stage.objects.filter(campaign=self.campaign).update(observed_hours=Decimal("25"))
        self.assertEqual(compute_forecast(self.campaign).forecast_hours, 25.0)

    def test_a_campaign_without_stages_counts_its_items_one_after_another(self) -> None:
        Stage.objects.filter(campaign=self.campaign).delete()
        forecast = compute_forecast(self.campaign)
        self.assertEqual((forecast.reserved_hours, forecast.forecast_hours), (22.0, 22.0))
        self.assertEqual(forecast.lots["advised_total"], "47.14")

    def test_an_item_config_with_a_model_gets_the_calculators_memory_verdict(self) -> None:
        self.variant.config = {"parameters": 7e9, "tokens": 1e9, "precision": "bf16"}
        self.variant.gpu = "RTX-4090"
        self.variant.save()
        forecast = compute_forecast(self.campaign)
        calc = self.item(forecast, self.variant).calculator
        assert calc is not None
        self.assertFalse(calc["fits_in_memory"])
        self.assertTrue(
            any(
                w.code == "memory" and w.message.startswith("variant A: Does not fit")
                for w in forecast.warnings
            )
        )


class StaleAndRecomputeTests(CommittedTestData, TestCase):
    team: Any
    campaign: Any

    @classmethod
    def setUpTestData(cls) -> None:
        seed_catalog()
        cls.team = Team.objects.create(name="nlp")
        cls.campaign = make_plannable(cls.team)

    def test_many_plan_changes_in_one_transaction_compute_the_forecast_once(self) -> None:
        stage = Stage.objects.filter(campaign=self.campaign).first()
        assert stage is not None
        with self.captureOnCommitCallbacks() as callbacks, transaction.atomic():
            for n in range(5):
                create_item(campaign=self.campaign, name=f"extra {n}")
            change_stage(stage=stage, planned_hours=Decimal("23"))
        messages = enqueued(callbacks)
        self.assertEqual({campaign for campaign, _version in messages}, {self.campaign.pk})
        self.assertEqual(messages[-1][1], campaign_row(self.campaign).input_version)
        # Every earlier version is superseded before anything is computed; the last one lands.
        answers = [recompute(campaign, version) for campaign, version in messages]
        self.assertEqual(answers, ["superseded"] * (len(messages) - 1) + ["landed"])

    def test_a_window_change_marks_stale_but_a_title_change_does_not(self) -> None:
        ensure_forecast(campaign=self.campaign)
        version = campaign_row(self.campaign).input_version
        update_campaign(campaign=self.campaign, title="Renamed")
        self.assertEqual(campaign_row(self.campaign).input_version, version)
        update_campaign(campaign=self.campaign, window_hours=Decimal("168"))
        self.assertEqual(campaign_row(self.campaign).input_version, version + 1)

    def test_a_duplicate_delivery_changes_nothing(self) -> None:
        version = mark_stale(self.campaign.pk)
        assert version is not None
        self.assertEqual(recompute(self.campaign.pk, version), "landed")
        landed = campaign_row(self.campaign)
        self.assertEqual(recompute(self.campaign.pk, version), "duplicate")
        again = campaign_row(self.campaign)
        self.assertEqual(again.outputs["landings"], landed.outputs["landings"])
        self.assertEqual(again.computed_at, landed.computed_at)

    def test_a_superseded_version_does_not_land(self) -> None:
        old = mark_stale(self.campaign.pk)
        new = mark_stale(self.campaign.pk)
        assert old is not None and new is not None
        self.assertEqual(recompute(self.campaign.pk, old), "superseded")
        self.assertIsNone(campaign_row(self.campaign).computed_version)
        # Computed before the change, landing after it: refused too.
        forecast = compute_forecast(self.campaign)
        mark_stale(self.campaign.pk)
        self.assertFalse(forecasts.land_forecast(self.campaign.pk, new + 0, forecast))
        self.assertEqual(campaign_row(self.campaign).status, "stale")

    def test_a_plan_the_pure_modules_refuse_is_marked_failed_with_the_reason(self) -> None:
        version = mark_stale(self.campaign.pk)
        assert version is not None
        with mock.patch(
            "estimates.services.forecast.compute_forecast", side_effect=ValueError("bad plan")
        ):
            self.assertEqual(recompute(self.campaign.pk, version), "failed")
        row = campaign_row(self.campaign)
        self.assertEqual(
            (row.status, row.error, row.computed_version), ("failed", "bad plan", version)
        )

    def test_deleting_a_draft_campaign_leaves_no_estimate_behind(self) -> None:
        ensure_forecast(campaign=self.campaign)
        # Django sets a deleted instance's pk to None: keep the id to look for its rows.
        campaign_id = self.campaign.pk
        self.assertTrue(Estimate.objects.filter(campaign_id=campaign_id).exists())
        self.campaign.delete()
        self.assertFalse(Estimate.objects.filter(campaign_id=campaign_id).exists())


class SweepTests(TestCase):
    team: Any
    lost: Any
    recent: Any

    @classmethod
    def setUpTestData(cls) -> None:
        seed_catalog()
        cls.team = Team.objects.create(name="nlp")
        cls.lost = make_plannable(cls.team, title="lost message")
        cls.recent = make_plannable(cls.team, title="just changed")

    def test_the_sweep_re_enqueues_a_forecast_stale_too_long_and_it_lands(self) -> None:
        mark_stale(self.lost.pk)
        mark_stale(self.recent.pk)
        long_ago = timezone.now() - timedelta(seconds=settings.STALE_ESTIMATE_SECONDS + 60)
        Estimate.objects.filter(campaign=self.lost).update(stale_since=long_ago)
        with celery_eager():
            self.assertEqual(sweep_stale_estimates.apply().get(), 1)
        lost = campaign_row(self.lost)
        self.assertEqual((lost.status, lost.computed_version), ("fresh", lost.input_version))
        self.assertIsNone(lost.stale_since)
        self.assertEqual(campaign_row(self.recent).status, "stale")


class PanelAndAdminTests(TestCase):
    seed: Any
    staff: Any
    root: Any

    @classmethod
    def setUpTestData(cls) -> None:
        seed_catalog()
        cls.seed = load_seed()
        cls.staff = make_user("sam", team=cls.seed.team, role="viewer")
        cls.root = get_user_model().objects.create_superuser("root", "root@example.com", None)

    def test_the_panel_shows_items_totals_the_window_and_the_advice(self) -> None:
        html = forecast_panel_html(self.seed)
        self.assertIn('id="forecast-panel"', html)
        self.assertIn("Baseline (testigo)", html)
        self.assertIn("Fits in the 72 h window: 24 h to spare.", html)
        self.assertIn("<td>48</td>", html)
        self.assertIn("The calendar takes 48 h of a 72 h window: 24 h to spare.", html)
        self.assertIn("<strong>Fresh</strong>", html)

    def test_staff_read_the_catalog_and_only_superusers_change_it(self) -> None:
        plan = RentalPlan.objects.first()
        assert plan is not None
        change = reverse("admin:catalog_rentalplan_change", args=[plan.pk])
        self.client.force_login(self.staff)
        self.assertEqual(
            self.client.get(reverse("admin:catalog_gpumodel_changelist")).status_code, 200
        )
        self.assertEqual(self.client.get(change).status_code, 200)
        self.assertEqual(self.client.post(change, {"price": "1.00"}).status_code, 403)
        self.assertEqual(self.client.get(reverse("admin:catalog_gpumodel_add")).status_code, 403)
        self.client.force_login(self.root)
        self.assertEqual(self.client.get(reverse("admin:catalog_gpumodel_add")).status_code, 200)
        self.assertTrue(GpuModel.objects.filter(name="RTX-4090").exists())

    def test_estimates_are_read_only_in_the_admin(self) -> None:
        estimate = ensure_forecast(campaign=self.seed)
        self.client.force_login(self.root)
        page = self.client.get(reverse("admin:estimates_estimate_change", args=[estimate.pk]))
        self.assertEqual(page.status_code, 200)
        self.assertNotContains(page, 'name="_save"')
        self.assertEqual(self.client.get(reverse("admin:estimates_estimate_add")).status_code, 403)
