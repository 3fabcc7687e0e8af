"""Calibration: observed ÷ estimated per stage kind and GPU, applied by forecasts only from 3
observations, with the campaigns it came from (docs/domain.md §20)."""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.test import TestCase
from hypothesis import given
from hypothesis import strategies as st

from campaigns.models import Campaign, Stage, Team
from campaigns.services.plans import commit_plan
from campaigns.tests.factories import as_user, make_plannable, make_user
from estimates.domain.calibration import (
    MIN_OBSERVATIONS,
    Observation,
    applicable,
    calibrate,
    gpu_in,
)
from estimates.forecasts import compute_forecast, panel_context

# --- Pure ------------------------------------------------------------------------------------


def obs(ratio: float, campaign: int = 1, gpu: str = "RTX-4090", kind: str = "training"):  # type: ignore[no-untyped-def]
    return Observation(kind, gpu, campaign, f"c{campaign}", 10.0, 10.0 * ratio)


def test_groups_by_kind_and_gpu_with_median_spread_and_sources() -> None:
    found = calibrate(
        [obs(1.2, 1), obs(1.5, 2), obs(1.3, 3), obs(0.5, 4, gpu="B200"), obs(2, 5, kind="setup")]
    )
    [setup, b200, rtx] = found  # by (kind, gpu)
    assert (rtx.kind, rtx.gpu, rtx.count) == ("training", "RTX-4090", 3)
    assert rtx.median == pytest.approx(1.3)
    assert rtx.as_json()["spread"] == {"min": 1.2, "max": 1.5, "p25": 1.25, "p75": 1.4}
    assert rtx.as_json()["source_campaigns"] == [
        {"id": 1, "title": "c1"},
        {"id": 2, "title": "c2"},
        {"id": 3, "title": "c3"},
    ]
    assert b200.count == 1 and b200.as_json()["spread"]["p25"] is None
    assert setup.kind == "setup"


def test_it_applies_only_from_three_observations_of_the_same_gpu() -> None:
    two = calibrate([obs(1.2, 1), obs(1.5, 2)])
    assert applicable(two, "training", "RTX-4090") is None
    three = calibrate([obs(1.2, 1), obs(1.5, 2), obs(1.3, 3)])
    assert applicable(three, "training", "rtx 4090") is three[0]
    assert applicable(three, "training", "B200") is None
    assert applicable(three, "setup", "RTX-4090") is None
    assert MIN_OBSERVATIONS == 3


def test_a_zero_hour_estimate_has_no_ratio() -> None:
    assert calibrate([Observation("training", "", 1, "c", 0.0, 5.0)]) == []


def test_a_resource_label_names_its_gpu() -> None:
    known = ["RTX-4090", "B200", "H100 SXM"]
    assert gpu_in("rtx4090-a", known) == "RTX-4090"
    assert gpu_in("2x-b200-lot", known) == "B200"
    assert gpu_in("gpu-a", known) == ""


@given(st.lists(st.floats(min_value=0.01, max_value=100), min_size=1, max_size=30))
def test_the_median_lies_within_the_spread(ratios: list[float]) -> None:
    [group] = calibrate([obs(r, i) for i, r in enumerate(ratios)])
    spread = group.spread()
    assert spread["min"] is not None and spread["max"] is not None
    assert spread["min"] - 1e-4 <= group.median <= spread["max"] + 1e-4
    assert group.count == len(ratios)


# --- On the database -------------------------------------------------------------------------


def observed_campaign(team: Team, title: str, observed: str) -> Campaign:
    """A committed campaign whose 22 h training stage on an RTX 4090 took `observed` hours."""
    campaign = make_plannable(team, title=title)
    Stage.objects.filter(campaign=campaign).update(resource="rtx4090-a")
    commit_plan(campaign=campaign)
    Stage.objects.filter(campaign=campaign).update(observed_hours=Decimal(observed))
    return campaign


@pytest.mark.postgres
class CalibrationTests(TestCase):
    @classmethod
    def setUpTestData(cls) -> None:
        cls.team = Team.objects.create(name="nlp")
        cls.viewer = make_user("vic", team=cls.team, role="viewer")
        cls.outsider = make_user("otto", team=Team.objects.create(name="vision"))
        # 22 h planned each time; 26.4, 33 and 28.6 h observed: ratios 1.2, 1.5, 1.3.
        cls.first = observed_campaign(cls.team, "first", "26.4")
        cls.second = observed_campaign(cls.team, "second", "33")
        make_plannable(cls.team, title="a draft is no observation")

    def next_campaign(self) -> Campaign:
        campaign = make_plannable(self.team, title="next")
        campaign.items.filter(name="variant A").update(gpu="RTX-4090")
        return campaign

    def variant(self, campaign: Campaign) -> dict:
        forecast = compute_forecast(campaign).as_json()
        return next(i for i in forecast["items"] if i["name"] == "variant A")

    def test_two_observations_are_shown_but_not_applied(self) -> None:
        body = as_user(self.viewer).get(f"/api/v1/teams/{self.team.pk}/calibration/").json()
        [group] = body["groups"]
        self.assertEqual(
            (group["stage_kind"], group["gpu"], group["count"]), ("training", "RTX-4090", 2)
        )
        self.assertFalse(group["applies"])
        self.assertEqual(self.variant(self.next_campaign())["time_source"], "assumed")

    def test_from_three_observations_forecasts_apply_the_median_and_name_the_sources(self) -> None:
        third = observed_campaign(self.team, "third", "28.6")
        body = as_user(self.viewer).get(f"/api/v1/teams/{self.team.pk}/calibration/").json()
        [group] = body["groups"]
        self.assertEqual(group["count"], 3)
        self.assertAlmostEqual(group["median_ratio"], 1.3)
        self.assertEqual(
            [c["id"] for c in group["source_campaigns"]],
            [self.first.pk, self.second.pk, third.pk],
        )
        campaign = self.next_campaign()
        item = self.variant(campaign)
        self.assertEqual(item["time_source"], "calibrated")
        self.assertAlmostEqual(item["forecast_hours"], 15.6)  # 12 h planned × 1.3
        self.assertIn(f"#{self.first.pk} first", item["note"])
        forecast = compute_forecast(campaign)
        self.assertEqual(forecast.time_source, "calibrated")
        [row] = forecast.as_json()["calibration"]
        self.assertEqual((row["raw_hours"], row["calibrated_hours"]), (12.0, 15.6))
        # The baseline item names no GPU: no RTX 4090 ratio applies to it.
        baseline = next(i for i in forecast.as_json()["items"] if i["name"] == "baseline")
        self.assertEqual(baseline["time_source"], "assumed")
        # A campaign never calibrates itself with its own observations.
        self.assertEqual(self.variant(third)["time_source"], "assumed")

    def test_the_forecast_panel_shows_raw_and_calibrated(self) -> None:
        from django.template.loader import render_to_string

        from estimates.forecasts import ensure_forecast

        observed_campaign(self.team, "third", "28.6")
        estimate = ensure_forecast(campaign=self.next_campaign())
        html = render_to_string("estimates/forecast_panel.html", panel_context(estimate))
        self.assertIn('id="forecast-calibration"', html)
        self.assertIn("raw 12 h, calibrated 15.60 h", html)

    def test_another_teams_calibration_is_not_found(self) -> None:
        answer = as_user(self.outsider).get(f"/api/v1/teams/{self.team.pk}/calibration/")
        self.assertEqual(answer.status_code, 404)
