"""A stop rule's grace (docs/domain.md §4.6): the loop may go on for the steps or minutes the rule
states after it fired, so it can reach and save a checkpoint; past them the run takes nothing."""

from __future__ import annotations

import math
from datetime import timedelta

from django.test import TestCase
from django.urls import reverse

from campaigns.models import MetricPoint, Run, StopRule, Team
from campaigns.services.plans import commit_plan
from campaigns.tests.factories import (
    as_key,
    as_user,
    ingest_key,
    make_plannable,
    make_user,
    patch,
    points,
    post,
)

RUN = "/api/v1/runs/grace-1/"


class GraceTestCase(TestCase):
    grace = {"grace_steps": 0, "grace_minutes": 0}

    @classmethod
    def setUpTestData(cls) -> None:
        cls.team = Team.objects.create(name="nlp")
        cls.owner = make_user("olga", team=cls.team, role="owner")
        cls.campaign = make_plannable(cls.team)
        cls.rule = StopRule.objects.get(campaign=cls.campaign, kind="non_finite_loss")
        StopRule.objects.filter(pk=cls.rule.pk).update(**cls.grace)
        commit_plan(campaign=cls.campaign, acting_user=cls.owner)
        cls.raw_key = ingest_key(cls.campaign, cls.owner)

    def setUp(self) -> None:
        self.loop = as_key(self.raw_key)
        baseline = self.campaign.items.get(name="baseline")
        body = {"run_id": "grace-1", "variant": baseline.pk, "kind": "full", "config": {}}
        post(self.loop, f"/api/v1/campaigns/{self.campaign.pk}/runs/", body)

    def fire_at(self, step: int) -> None:
        answer = post(self.loop, RUN + "metrics/", points(("loss", step, math.nan)))
        self.assertIs(answer.json()["stopped"], True)

    def run_row(self) -> Run:
        return Run.objects.get(run_id="grace-1")


class StepGrace(GraceTestCase):
    grace = {"grace_steps": 3, "grace_minutes": 0}

    def test_a_stopped_run_takes_points_up_to_the_rules_grace_steps_then_refuses(self) -> None:
        self.fire_at(20)
        within = post(self.loop, RUN + "metrics/", points(("loss", 21, 1.0), ("loss", 23, 0.9)))
        self.assertEqual(within.status_code, 201)
        self.assertEqual(within.json()["stop"]["grace_until_step"], 23)
        beyond = post(self.loop, RUN + "metrics/", points(("loss", 24, 0.8)))
        self.assertEqual(beyond.status_code, 409)
        self.assertIn("grace of 3 steps is over", beyond.json()["detail"])
        steps = MetricPoint.objects.filter(run=self.run_row()).values_list("step", flat=True)
        self.assertEqual(sorted(steps), [20, 21, 23])

    def test_a_nan_within_the_grace_leaves_the_first_firing_as_the_stop(self) -> None:
        self.fire_at(20)
        again = post(self.loop, RUN + "metrics/", points(("loss", 22, math.inf)))
        self.assertEqual(again.status_code, 201)
        run = self.run_row()
        self.assertEqual((run.stop_step, run.stop_rule_id), (20, self.rule.pk))
        self.assertIn("NaN at step 20", run.stop_reason)

    def test_the_run_read_tells_the_loop_where_the_grace_ends(self) -> None:
        self.fire_at(20)
        stop = self.loop.get(RUN).json()["stop"]
        self.assertEqual(
            {k: stop[k] for k in ("grace_steps", "grace_minutes", "grace_until_step")},
            {"grace_steps": 3, "grace_minutes": 0, "grace_until_step": 23},
        )
        self.assertIsNone(stop["grace_seconds_left"])

    def test_a_finished_run_takes_nothing_in_its_grace(self) -> None:
        self.fire_at(20)
        post(self.loop, RUN + "finish/", {"status": "failed", "observed_hours": "1.5"})
        answer = post(self.loop, RUN + "metrics/", points(("loss", 21, 1.0)))
        self.assertEqual(answer.status_code, 409)


class MinuteGrace(GraceTestCase):
    grace = {"grace_steps": 0, "grace_minutes": 10}

    def test_a_stopped_run_takes_any_step_until_the_minutes_are_over(self) -> None:
        self.fire_at(20)
        self.assertEqual(
            post(self.loop, RUN + "metrics/", points(("loss", 500, 1.0))).status_code, 201
        )
        left = self.loop.get(RUN).json()["stop"]["grace_seconds_left"]
        self.assertTrue(500 < left <= 600)
        run = self.run_row()
        Run.objects.filter(pk=run.pk).update(stopped_at=run.stopped_at - timedelta(minutes=11))
        late = post(self.loop, RUN + "metrics/", points(("loss", 501, 1.0)))
        self.assertEqual(late.status_code, 409)
        self.assertIn("grace of 10 minutes is over", late.json()["detail"])
        self.assertEqual(self.loop.get(RUN).json()["stop"]["grace_seconds_left"], 0.0)


class NoGrace(GraceTestCase):
    def test_without_a_grace_the_next_batch_is_refused_as_before(self) -> None:
        self.fire_at(20)
        answer = post(self.loop, RUN + "metrics/", points(("loss", 20, 1.0)))
        self.assertEqual(answer.status_code, 409)
        self.assertNotIn("grace of", answer.json()["detail"])


class GraceInThePlan(TestCase):
    @classmethod
    def setUpTestData(cls) -> None:
        cls.team = Team.objects.create(name="nlp")
        cls.owner = make_user("olga", team=cls.team, role="owner")
        cls.campaign = make_plannable(cls.team)

    def setUp(self) -> None:
        self.api = as_user(self.owner)
        self.url = f"/api/v1/campaigns/{self.campaign.pk}/stop-rules/"

    def test_a_rule_states_its_grace_before_the_runs_and_the_baseline_freezes_it(self) -> None:
        body = {
            "kind": "metric_threshold",
            "metric": "val_loss",
            "comparator": "gt",
            "threshold": 5,
            "grace_steps": 200,
            "grace_minutes": 15,
        }
        created = post(self.api, self.url, body)
        self.assertEqual(created.status_code, 201)
        self.assertEqual(
            (created.json()["grace_steps"], created.json()["grace_minutes"]), (200, 15)
        )
        commit_plan(campaign=self.campaign, acting_user=self.owner)
        self.campaign.refresh_from_db()
        frozen = {r["id"]: r for r in self.campaign.baseline.snapshot["stop_rules"]}
        self.assertEqual(frozen[created.json()["id"]]["grace_steps"], 200)
        changed = patch(self.api, f"{self.url}{created.json()['id']}/", {"grace_steps": 0})
        self.assertEqual(changed.status_code, 409)

    def test_a_negative_or_too_long_grace_is_refused_naming_the_field(self) -> None:
        for field, value in (("grace_steps", -1), ("grace_minutes", 7 * 24 * 60 + 1)):
            body = {"kind": "non_finite_loss", field: value}
            answer = post(self.api, self.url, body)
            self.assertEqual(answer.status_code, 400, answer.content)
            self.assertIn(field, answer.json())


class GraceInTheAdmin(TestCase):
    @classmethod
    def setUpTestData(cls) -> None:
        cls.team = Team.objects.create(name="nlp")
        cls.owner = make_user("olga", team=cls.team, role="owner")
        cls.campaign = make_plannable(cls.team)
        StopRule.objects.filter(campaign=cls.campaign).update(grace_steps=50, grace_minutes=12)

    def test_the_stop_rules_inline_shows_the_grace_and_freezes_it_at_commit(self) -> None:
        self.client.force_login(self.owner)
        url = reverse("admin:campaigns_campaign_change", args=[self.campaign.pk])
        draft = self.client.get(url)
        self.assertContains(draft, 'name="stop_rules-0-grace_steps"')
        self.assertContains(draft, 'value="50"')
        commit_plan(campaign=self.campaign, acting_user=self.owner)
        frozen = self.client.get(url)
        self.assertNotContains(frozen, 'name="stop_rules-0-grace_steps"')
        self.assertContains(frozen, "Grace steps")
        self.assertContains(frozen, "12")
