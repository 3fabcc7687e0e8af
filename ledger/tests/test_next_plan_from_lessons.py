"""The next plan starts from the last one's lessons (issue 30, item 6; docs/domain.md §21), end
to end through the API: the seed's campaign took 78.3 h of a 48 h plan, setup ×6.00, loading
×5.00, training ×2.09 (variant B cut after 0.5 h); its clone plans those ratios into its setup,
loading and training, each figure saying where it came from and its spread, and its forecast
is what the predecessor took without the cut variant (77.8 h), not its 48 h plan again. The
report's "next time" advice states the same ratios: one function gives both."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest
from django.test import TestCase

from campaigns.models import Campaign, Team
from campaigns.tests.factories import as_user, celery_eager, make_user
from estimates.selectors.timeline import campaign_forecast
from ledger.models import Report
from ledger.tests.support import seed_campaign

EXPECTED = {"setup": "6.00", "loading": "5.00", "training": "2.09"}


@pytest.mark.postgres
class TheCloneCarriesThePredecessorsLessons(TestCase):
    @classmethod
    def setUpTestData(cls) -> None:
        cls.team = Team.objects.create(name="nlp")
        cls.planner = make_user("pia", team=cls.team)
        api = as_user(cls.planner)
        cls.source = Campaign.objects.get(pk=seed_campaign(api)["id"])
        answer = api.post(f"/api/v1/campaigns/{cls.source.pk}/clone/", {}, format="json")
        assert answer.status_code == 201, answer.content
        cls.answer = answer.json()
        cls.clone = Campaign.objects.get(pk=cls.answer["id"])

    def test_setup_loading_and_training_carry_the_predecessors_ratios(self) -> None:
        stages = {s.name: s for s in self.clone.stages.all()}
        self.assertEqual(stages["Install environment"].planned_hours, Decimal("12.00"))
        self.assertEqual(stages["Load corpus"].planned_hours, Decimal("10.00"))
        self.assertEqual(stages["Train baseline"].planned_hours, Decimal("20.90"))
        self.assertNotIn("Train variant B", stages)  # the cut item's stage goes with it
        self.assertEqual(stages["Retrieve results"].planned_hours, Decimal("1.00"))
        for kind, ratio in EXPECTED.items():
            lessons = {p["ratio"] for p in self.answer["provenance"] if p["kind"] == kind}
            self.assertEqual(lessons, {ratio}, kind)
        baseline = self.clone.items.get(name="Baseline")
        self.assertEqual(baseline.planned_hours, Decimal("20.90"))  # its training stages' ×2.09
        self.assertEqual(self.clone.items.get(name="Data check").planned_hours, Decimal("1.00"))

    def test_each_figure_says_where_it_came_from_and_its_spread(self) -> None:
        setup = next(p for p in self.answer["provenance"] if p["name"] == "Install environment")
        self.assertEqual(
            (setup["planned_before"], setup["ratio"], setup["hours"], setup["source"]),
            ("2.00", "6.00", "12.00", "this campaign"),
        )
        self.assertEqual(setup["words"], "this campaign: setup took ×6.00 (12.00 h for 2.00 h)")
        training = next(p for p in self.answer["provenance"] if p["name"] == "Train variant A")
        self.assertEqual(training["spread"]["min"], 2.09)
        self.assertEqual(training["stages"], 2)  # baseline and variant A; the cut B is not one
        texts = {u["subject"]: u["text"] for u in self.answer["inherited_uncertainties"]}
        self.assertIn("2.00 h planned before × 6.00", texts["stage Install environment"])
        self.assertIn("= 12.00 h calibrated", texts["stage Install environment"])
        page = self.client
        page.force_login(self.planner)
        html = page.get(f"/admin/campaigns/campaign/{self.clone.pk}/change/").content.decode()
        self.assertIn("this campaign: setup took ×6.00", html)

    def test_the_clones_forecast_is_what_the_predecessor_took_not_its_plan_again(self) -> None:
        before = campaign_forecast(self.source).timeline
        cut = next(s for s in before.stages if s.state == "cut")
        after = campaign_forecast(self.clone)
        # 78.3 h as it ran, less the 0.5 h the cut variant ran: 77.8 h, not 48 h (nor 37.23).
        self.assertAlmostEqual(after.timeline.hours, before.hours - cut.hours)
        self.assertAlmostEqual(after.timeline.hours, 77.8)
        # Calibrated once: no item or stage is multiplied again by the forecast.
        for item in after.items:
            self.assertAlmostEqual(item.forecast_hours, item.planned_hours, msg=item.name)
        self.assertTrue(all(s.basis == "planned" for s in after.timeline.stages))

    def test_the_reports_advice_and_the_clone_apply_the_same_ratios(self) -> None:
        api = as_user(self.planner)
        with celery_eager(), self.captureOnCommitCallbacks(execute=True):
            answer = api.post(f"/api/v1/campaigns/{self.source.pk}/reports/", {})
        report = Report.objects.get(pk=answer.json()["id"])
        data = json.loads(api.get(f"/api/v1/reports/{report.pk}/json/").content)
        advised = {(r["kind"], r["gpu"]): r["ratio"] for r in data["next_campaign"]["ratios"]}
        applied = {(p["kind"], p["gpu"]): p["ratio"] for p in self.answer["provenance"]}
        self.assertEqual(applied, {k: advised[k] for k in applied})
        for kind, ratio in EXPECTED.items():
            self.assertEqual(advised[(kind, "RTX-4090")], ratio)
        markdown = api.get(f"/api/v1/reports/{report.pk}/markdown/").content.decode()
        self.assertIn("setup on RTX-4090: this campaign: setup took ×6.00", markdown)
