"""Calibration reads the timelines (docs/domain.md §20): stages tied to no item are observations
like any other, and the forecast applies a kind's median to the planned stages tied to no item
too; hours a clone calibrated already (and then edited by hand: no longer) are left as they are
(§21). Through the API where there is one."""

from __future__ import annotations

from decimal import Decimal

from django.test import TestCase

from campaigns.models import Campaign, Stage, Team
from campaigns.services.plans import commit_plan
from campaigns.tests.factories import as_user, make_plannable, make_user, patch
from estimates.selectors.timeline import campaign_forecast


def with_setup(team: Team, title: str, observed: str | None) -> Campaign:
    """A campaign whose 2 h setup on an RTX 4090 (tied to no item) comes before its training;
    committed and observed when `observed` is given."""
    campaign = make_plannable(team, title=title)
    train = Stage.objects.get(campaign=campaign)
    setup = Stage.objects.create(
        campaign=campaign,
        name="setup",
        kind="setup",
        resource="rtx4090-a",
        planned_hours=Decimal("2"),
    )
    train.depends_on.set([setup])
    if observed is not None:
        commit_plan(campaign=campaign)
        Stage.objects.filter(pk=setup.pk).update(observed_hours=Decimal(observed))
    return campaign


class SetupIsCalibratedToo(TestCase):
    @classmethod
    def setUpTestData(cls) -> None:
        cls.team = Team.objects.create(name="nlp")
        cls.planner = make_user("pia", team=cls.team)
        # 3, 3 and 6 h for 2 h: ratios 1.5, 1.5, 3.0, median 1.5.
        cls.done = [with_setup(cls.team, f"c{n}", hours) for n, hours in enumerate("336")]

    def test_the_teams_calibration_counts_the_stages_tied_to_no_item(self) -> None:
        body = as_user(self.planner).get(f"/api/v1/teams/{self.team.pk}/calibration/").json()
        setup = next(g for g in body["groups"] if g["stage_kind"] == "setup")
        self.assertEqual((setup["gpu"], setup["count"], setup["applies"]), ("RTX-4090", 3, True))
        self.assertAlmostEqual(setup["median_ratio"], 1.5)

    def test_the_forecast_applies_the_median_to_a_planned_setup(self) -> None:
        draft = with_setup(self.team, "next", None)
        forecast = campaign_forecast(draft)
        setup = next(s for s in forecast.timeline.stages if s.kind == "setup")
        self.assertEqual((setup.hours, setup.basis), (3.0, "calibrated"))
        self.assertEqual(forecast.timeline.hours, 3.0 + 22.0)
        [row] = [r for r in forecast.calibration if r["item"] == "stage setup"]
        self.assertEqual((row["raw_hours"], row["calibrated_hours"], row["count"]), (2.0, 3.0, 3))
        answer = as_user(self.planner).get(f"/api/v1/campaigns/{draft.pk}/timeline/").json()
        shown = next(s for s in answer["stages"] if s["kind"] == "setup")
        self.assertEqual((shown["forecast_hours"], shown["basis"]), ("3.00", "calibrated"))

    def test_an_observed_setup_lasts_what_it_took(self) -> None:
        setup = next(
            s for s in campaign_forecast(self.done[2]).timeline.stages if s.kind == "setup"
        )
        self.assertEqual((setup.hours, setup.basis), (6.0, "observed"))

    def test_a_clones_setup_is_calibrated_once_until_a_planner_types_its_hours(self) -> None:
        api = as_user(self.planner)
        answer = api.post(f"/api/v1/campaigns/{self.done[0].pk}/clone/", {}, format="json")
        self.assertEqual(answer.status_code, 201, answer.content)
        clone = Campaign.objects.get(pk=answer.json()["id"])
        setup = clone.stages.get(kind="setup")
        self.assertEqual(setup.planned_hours, Decimal("3.00"))  # 2 × the team's 1.5
        line = next(s for s in campaign_forecast(clone).timeline.stages if s.kind == "setup")
        self.assertEqual((line.hours, line.basis), (3.0, "planned"))  # not 3 × 1.5 = 4.5
        # Typed by hand, the figure is the planner's own: the forecast calibrates it.
        edited = patch(
            api, f"/api/v1/campaigns/{clone.pk}/stages/{setup.pk}/", {"planned_hours": "4"}
        )
        self.assertEqual(edited.status_code, 200, edited.content)
        setup.refresh_from_db()
        self.assertIsNone(setup.calibrated_from)
        line = next(s for s in campaign_forecast(clone).timeline.stages if s.kind == "setup")
        self.assertEqual((line.hours, line.basis), (6.0, "calibrated"))
