"""`manage.py load_demo --history` (what `make run` loads) gives a newcomer a history to look at
(issue 18, item 6): three earlier campaigns closed with runs and their curves, observed hours,
deliverables, ledger entries and a closing report, loaded through the services; a second load
changes nothing."""

from __future__ import annotations

from decimal import Decimal
from io import StringIO
from typing import Any

from django.apps import apps
from django.core.management import call_command
from django.test import TestCase
from django.urls import reverse

from campaigns.models import Campaign, MetricSummary
from estimates.forecasts import compute_forecast
from ledger.management.demo_history import HISTORY
from ledger.selectors.ledger_summary import ledger_summary


def every_row() -> dict[str, Any]:
    """Every row of the project's apps (timestamps of a recomputation aside)."""
    rows: dict[str, Any] = {}
    for label in ("campaigns", "estimates", "ledger"):
        for model in apps.get_app_config(label).get_models():
            rows[model._meta.label] = [
                {k: v for k, v in row.items() if not k.endswith(("_at", "updated"))}
                for row in model.objects.order_by("pk").values()
            ]
    return rows


class TheDemoHistory(TestCase):
    @classmethod
    def setUpTestData(cls) -> None:
        call_command("load_demo", "--history", stdout=StringIO())
        cls.earlier = list(Campaign.objects.filter(title__startswith="Earlier:").order_by("id"))

    def test_three_earlier_campaigns_are_closed_with_a_conclusion(self) -> None:
        self.assertEqual([c.title for c in self.earlier], [p.title for p in HISTORY])
        for campaign in self.earlier:
            with self.subTest(campaign.title):
                self.assertEqual(campaign.status, "closed")
                self.assertTrue(campaign.conclusion)
                self.assertEqual(campaign.decisions.get().outcome, "continue")

    def test_each_has_completed_runs_with_curves_and_the_hours_its_stages_took(self) -> None:
        for campaign in self.earlier:
            with self.subTest(campaign.title):
                runs = list(campaign.runs.order_by("run_id"))
                self.assertEqual([r.status for r in runs], ["completed", "completed"])
                for run in runs:
                    names = set(
                        MetricSummary.objects.filter(run=run).values_list("name", flat=True)
                    )
                    self.assertEqual(names, {"loss", "lr", "val_f1"})
                    stage = campaign.stages.get(variant=run.variant)
                    self.assertEqual(stage.observed_hours, run.observed_hours)
                    self.assertTrue(stage.deviation_note)

    def test_the_team_calibration_is_the_median_of_the_six_stages(self) -> None:
        demo = Campaign.objects.get(team__name="demo", title__startswith="Baseline vs")
        forecast = compute_forecast(demo).as_json()
        self.assertEqual(forecast["time_source"], "calibrated")
        # 12/10, 12.5/10, 13/10, 12.5/10, 12.5/10, 13/10: median 1.25 over six stages.
        self.assertEqual(forecast["calibration"][0]["median_ratio"], 1.25)
        self.assertEqual(forecast["calibration"][0]["count"], 6)

    def test_each_has_a_cost_per_accepted_deliverable(self) -> None:
        costs = [ledger_summary(c).cost_per_accepted for c in self.earlier]
        # The 3-day lot (47.14) plus the campaign's storage entry, over one accepted corpus.
        self.assertEqual(costs, [Decimal("50.64"), Decimal("51.34"), Decimal("52.14")])
        rank8 = self.earlier[0]
        self.assertEqual(
            sorted((d.kind, d.accepted) for d in rank8.deliverables.all()),
            [("adapter", False), ("error_analysis", True), ("predictions", True)],
        )

    def test_each_has_a_ready_closing_report_of_the_closed_campaign(self) -> None:
        for campaign in self.earlier:
            with self.subTest(campaign.title):
                report = campaign.reports.get()
                self.assertEqual(report.status, "ready")
                self.assertFalse(report.out_of_date)
                self.assertIn(campaign.conclusion, report.markdown)

    def test_the_next_campaign_inherits_the_rejected_adapter(self) -> None:
        from ledger.services import plan_next_campaign

        clone = plan_next_campaign(campaign=self.earlier[0])
        self.assertTrue(
            any("base_revision" in u["text"] for u in clone.inherited_uncertainties),
            clone.inherited_uncertainties,
        )

    def test_a_second_load_changes_nothing(self) -> None:
        before = every_row()
        out = StringIO()
        call_command("load_demo", "--history", stdout=out)
        self.assertEqual(every_row(), before)
        self.assertNotIn("Loaded", out.getvalue())

    def test_an_earlier_campaign_page_shows_its_runs_and_reports(self) -> None:
        from django.contrib.auth import get_user_model

        self.client.force_login(get_user_model().objects.get(username="demo"))
        page = self.client.get(
            reverse("admin:campaigns_campaign_change", args=[self.earlier[0].pk])
        )
        self.assertContains(page, "deliverables: 2 accepted, 1 rejected")
        self.assertContains(page, 'id="spend-chart"')
