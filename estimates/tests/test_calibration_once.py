"""Calibration counts only completed, not-cut stages and is applied once (issue 18, item 1).

By hand: four campaigns ran their 22 h RTX 4090 training stage in 26.4, 19.8, 28.6 and 22 h
(ratios 1.2, 0.9, 1.3, 1.0); a fifth cut its item after 0.25 h of a 12 h stage (0.0208). The
cut stage is no observation: the median is (1.0 + 1.2) / 2 = 1.1 (1.0 with it), the spread
0.9..1.3. The clone of the last one, whose RTX 4090 item plans 12 h, plans 12 × 1.1 = 13.20 h
and records where they came from (docs/domain.md §21); its forecast is 13.2 h, not
13.2 × 1.1 = 14.52 h: calibrated once.
"""

from __future__ import annotations

from decimal import Decimal

from django.test import TestCase

from campaigns.models import Campaign, DecisionPoint, PlannedItem, Stage, Team
from campaigns.services.plans import commit_plan
from campaigns.tests.factories import as_user, make_plannable, make_user, pilot
from estimates.forecasts import compute_forecast


def observed_campaign(team: Team, title: str, observed: str) -> Campaign:
    campaign = make_plannable(team, title=title)
    Stage.objects.filter(campaign=campaign).update(resource="rtx4090-a")
    commit_plan(campaign=campaign)
    Stage.objects.filter(campaign=campaign).update(observed_hours=Decimal(observed))
    return campaign


class CalibrationIsAppliedOnceToCompletedStages(TestCase):
    @classmethod
    def setUpTestData(cls) -> None:
        cls.team = Team.objects.create(name="nlp")
        cls.planner = make_user("pia", team=cls.team)
        for title, hours in (("first", "26.4"), ("second", "19.8"), ("third", "28.6")):
            observed_campaign(cls.team, title, hours)
        cls.cutting = make_plannable(cls.team, title="cut after the pilot")
        variant = PlannedItem.objects.get(campaign=cls.cutting, name="variant A")
        variant.gpu = "RTX-4090"
        variant.save()
        Stage.objects.create(
            campaign=cls.cutting,
            name="train A",
            kind="training",
            machine=True,
            resource="rtx4090-b",
            variant=variant,
            planned_hours=Decimal("12"),
        )
        Stage.objects.filter(campaign=cls.cutting, name="train").delete()
        commit_plan(campaign=cls.cutting)
        Stage.objects.filter(campaign=cls.cutting, name="train A").update(
            observed_hours=Decimal("0.25"), deviation_note="cut after the pilot"
        )
        decision = DecisionPoint.objects.create(
            campaign=cls.cutting, label="after the pilot", outcome="cut", rationale="too slow"
        )
        decision.cut_variants.set([variant])
        PlannedItem.objects.filter(pk=variant.pk).update(status="cut")
        cls.source = observed_campaign(cls.team, "source", "22")  # ratio 1.0: four observations
        PlannedItem.objects.filter(campaign=cls.source, name="variant A").update(gpu="RTX-4090")

    def test_the_cut_stage_is_no_observation(self) -> None:
        body = as_user(self.planner).get(f"/api/v1/teams/{self.team.pk}/calibration/").json()
        [group] = body["groups"]
        # 1.2, 0.9, 1.3 and the source's 1.0: median (1.0 + 1.2) / 2 = 1.1; the cut 0.0208 is out.
        self.assertEqual(group["count"], 4)
        self.assertAlmostEqual(group["median_ratio"], 1.1)
        self.assertEqual((group["spread"]["min"], group["spread"]["max"]), (0.9, 1.3))

    def test_the_clone_plans_the_calibrated_hours_and_its_forecast_calibrates_once(self) -> None:
        answer = as_user(self.planner).post(
            f"/api/v1/campaigns/{self.source.pk}/clone/", {}, format="json"
        )
        self.assertEqual(answer.status_code, 201, answer.content)
        clone = Campaign.objects.get(pk=answer.json()["id"])
        item = clone.items.get(name="variant A")
        self.assertEqual(item.planned_hours, Decimal("13.20"))  # 12 × the team's 1.1
        self.assertEqual(
            (item.calibrated_from["ratio"], item.calibrated_from["source"]), ("1.1000", "team")
        )
        notes = [
            u["text"]
            for u in answer.json()["inherited_uncertainties"]
            if u["kind"] == "calibrated_hours" and u["subject"] == "variant A"
        ]
        self.assertEqual(len(notes), 1)
        self.assertIn("12.00 h planned before × 1.10", notes[0])
        self.assertIn("= 13.20 h calibrated", notes[0])
        forecast = compute_forecast(clone).as_json()
        variant = next(i for i in forecast["items"] if i["name"] == "variant A")
        self.assertEqual(variant["time_source"], "calibrated")
        self.assertAlmostEqual(variant["forecast_hours"], 13.2)  # not 13.2 × 1.1 = 14.52
        self.assertIn("calibrated once", variant["note"])

    def test_a_pilot_the_item_cannot_use_leaves_the_forecast_as_informed_as_before(self) -> None:
        # The "calibrated 15 h" → "assumed 12 h": a pilot measured, but the item states
        # neither its work nor the throughput it assumed, so the pilot cannot rescale it.
        answer = as_user(self.planner).post(
            f"/api/v1/campaigns/{self.source.pk}/clone/", {}, format="json"
        )
        clone = Campaign.objects.get(pk=answer.json()["id"])
        item = clone.items.get(name="variant A")
        pilot(item, tokens_per_second=900)
        forecast = compute_forecast(clone).as_json()
        variant = next(i for i in forecast["items"] if i["name"] == "variant A")
        self.assertEqual(variant["time_source"], "calibrated")
        self.assertAlmostEqual(variant["forecast_hours"], 13.2)
        self.assertIn("states neither the work", variant["note"])
        self.assertIn("× 1.10", variant["note"])
        self.assertEqual(len(forecast["calibration"]), 1)
