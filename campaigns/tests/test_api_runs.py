"""Run logging through the API (docs/api.md "Run logging"): a training loop with an ingest key."""

from __future__ import annotations

import json
import math
from decimal import Decimal

import pytest
from django.db import connection
from django.test import TestCase
from django.test.utils import CaptureQueriesContext

from campaigns.models import (
    CampaignStatus,
    Checkpoint,
    MetricPoint,
    Run,
    Team,
    ThroughputSample,
)
from campaigns.tests.factories import (
    as_key,
    as_user,
    committed_campaign,
    ingest_key,
    make_plannable,
    make_user,
    points,
    post,
    rule_ids,
)

RUN = "/api/v1/runs/lora-r16-s1/"


class RunApiTestCase(TestCase):
    @classmethod
    def setUpTestData(cls) -> None:
        cls.team = Team.objects.create(name="nlp")
        cls.owner = make_user("olga", team=cls.team, role="owner")
        cls.campaign = committed_campaign(cls.team, cls.owner, lots=0, automatic_rules=True)
        cls.rules = rule_ids(cls.campaign)
        cls.baseline = cls.campaign.items.get(name="baseline")
        cls.raw_key = ingest_key(cls.campaign, cls.owner)

    def setUp(self) -> None:
        self.loop = as_key(self.raw_key)

    def start(self, run_id: str = "lora-r16-s1", config: dict | None = None, **extra: object):  # type: ignore[no-untyped-def]
        body = {
            "run_id": run_id,
            "variant": self.baseline.pk,
            "kind": "pilot",
            "config": {"lr": 2e-4, "rank": 16} if config is None else config,
            **extra,
        }
        return post(self.loop, f"/api/v1/campaigns/{self.campaign.pk}/runs/", body)

    def run_row(self, run_id: str = "lora-r16-s1") -> Run:
        return Run.objects.get(team=self.team, run_id=run_id)


class CreatingRuns(RunApiTestCase):
    def test_it_creates_a_run_for_the_keys_campaign_and_marks_the_campaign_running(self) -> None:
        answer = self.start()
        self.assertEqual(answer.status_code, 201, answer.content)
        self.assertEqual(answer.json()["run_id"], "lora-r16-s1")
        self.assertEqual(answer.json()["status"], "running")
        self.assertIs(answer.json()["stopped"], False)
        run = self.run_row()
        self.assertEqual(
            (run.campaign_id, run.variant_id, run.kind, run.config),
            (self.campaign.pk, self.baseline.pk, "pilot", {"lr": 2e-4, "rank": 16}),
        )
        self.campaign.refresh_from_db()
        self.assertEqual(self.campaign.status, CampaignStatus.RUNNING)

    def test_the_same_run_id_and_config_answers_the_same_run_with_200(self) -> None:
        first = self.start()
        again = self.start()
        self.assertEqual(again.status_code, 200)
        self.assertEqual(again.json()["created_at"], first.json()["created_at"])
        self.assertEqual(Run.objects.filter(team=self.team).count(), 1)

    def test_it_refuses_a_new_config_under_an_old_run_id(self) -> None:
        self.start()
        answer = self.start(config={"lr": 1e-3, "rank": 16})
        self.assertEqual(answer.status_code, 409)
        self.assertIn("a new configuration needs a new run id", answer.json()["detail"])
        self.assertEqual(self.run_row().config, {"lr": 2e-4, "rank": 16})

    def test_a_run_id_is_unique_across_the_campaigns_of_a_team(self) -> None:
        self.start()
        other = committed_campaign(
            self.team, self.owner, title="another question", lots=0, automatic_rules=True
        )
        answer = post(
            as_user(self.owner),
            f"/api/v1/campaigns/{other.pk}/runs/",
            {"run_id": "lora-r16-s1", "config": {"lr": 2e-4, "rank": 16}},
        )
        self.assertEqual(answer.status_code, 409)
        self.assertIn("another campaign", answer.json()["detail"])

    def test_a_draft_campaign_takes_no_runs_until_its_rules_are_committed(self) -> None:
        draft = make_plannable(self.team, title="still planning")
        answer = post(
            as_user(self.owner), f"/api/v1/campaigns/{draft.pk}/runs/", {"run_id": "early-1"}
        )
        self.assertEqual(answer.status_code, 409)
        self.assertIn("commit the plan", answer.json()["detail"])
        self.assertFalse(Run.objects.exists())

    def test_it_names_the_field_of_a_bad_run(self) -> None:
        for body, field in [
            ({"run_id": "has a space"}, "run_id"),
            ({"run_id": "ok-1", "kind": "marathon"}, "kind"),
            ({"run_id": "ok-1", "config": [1, 2]}, "config"),
            ({"run_id": "ok-1", "config": {"x": "nul\u0000"}}, "config"),
            ({"run_id": "ok-1", "variant": 999_999}, "variant"),
            ({"run_id": "ok-1", "variant": "first"}, "variant"),
            ({}, "run_id"),
        ]:
            with self.subTest(body=body):
                answer = post(self.loop, f"/api/v1/campaigns/{self.campaign.pk}/runs/", body)
                self.assertEqual(answer.status_code, 400)
                self.assertIn(field, answer.json())
        self.assertFalse(Run.objects.exists())


class LoggingMetrics(RunApiTestCase):
    def test_it_accepts_a_batch_and_stores_every_point(self) -> None:
        self.start()
        batch = points(*[("loss", s, 3.0 - s / 100) for s in range(100)], ("lr", 99, 1e-4))
        answer = post(self.loop, RUN + "metrics/", batch)
        self.assertEqual(answer.status_code, 201, answer.content)
        self.assertEqual(answer.json(), {"accepted": 101, "stopped": False, "stop": None})
        run = self.run_row()
        self.assertEqual(MetricPoint.objects.filter(run=run).count(), 101)
        self.assertAlmostEqual(
            MetricPoint.objects.get(run=run, key__name="loss", step=42).value, 2.58
        )
        self.assertEqual(run.last_step, 99)

    def test_a_nan_loss_stops_the_run_with_the_rule_and_the_reason(self) -> None:
        self.start()
        answer = post(
            self.loop, RUN + "metrics/", points(("loss", 10, 2.31), ("loss", 20, math.nan))
        )
        self.assertEqual(answer.status_code, 201)
        body = answer.json()
        self.assertIs(body["stopped"], True)
        self.assertEqual(body["stop"]["rule"], self.rules["non_finite_loss"])
        self.assertEqual(body["stop"]["kind"], "non_finite_loss")
        self.assertEqual(body["stop"]["step"], 20)
        self.assertIn("loss is NaN at step 20", body["stop"]["reason"])
        run = self.run_row()
        self.assertEqual(run.status, "stopped")
        self.assertEqual(run.stop_rule_id, self.rules["non_finite_loss"])
        self.assertEqual(run.stop_reason, body["stop"]["reason"])
        self.assertEqual(run.stop_step, 20)

    def test_the_batch_that_fired_is_stored_and_later_batches_answer_409_naming_the_stop(
        self,
    ) -> None:
        self.start()
        post(self.loop, RUN + "metrics/", points(("loss", 1, 2.0), ("loss", 2, math.inf)))
        later = post(self.loop, RUN + "metrics/", points(("loss", 3, 1.0)))
        self.assertEqual(later.status_code, 409)
        self.assertEqual(later.json()["status"], "stopped")
        self.assertEqual(later.json()["stop"]["rule"], self.rules["non_finite_loss"])
        self.assertIn("Infinity", later.json()["detail"])
        stored = MetricPoint.objects.filter(run=self.run_row()).order_by("step")
        self.assertEqual([p.step for p in stored], [1, 2])
        self.assertEqual(stored[1].as_float(), math.inf)

    def test_non_finite_values_are_accepted_as_strings_too_and_stored_as_given(self) -> None:
        self.start()
        batch = points(("grad", 1, "NaN"), ("grad", 2, "-Infinity"), ("grad", 3, "infinity"))
        answer = post(self.loop, RUN + "metrics/", batch)
        self.assertEqual(answer.status_code, 201, answer.content)
        self.assertIs(answer.json()["stopped"], False)  # no rule watches "grad"
        stored = {p.step: p for p in MetricPoint.objects.filter(run=self.run_row())}
        self.assertTrue(math.isnan(stored[1].as_float()))
        self.assertEqual(stored[2].as_float(), -math.inf)
        self.assertEqual(stored[3].as_float(), math.inf)
        self.assertEqual(
            [stored[s].non_finite for s in (1, 2, 3)], ["NaN", "-Infinity", "Infinity"]
        )

    def test_a_nan_never_matches_a_numeric_threshold(self) -> None:
        self.start()
        answer = post(self.loop, RUN + "metrics/", points(("val_loss", 5, math.nan)))
        self.assertIs(answer.json()["stopped"], False)
        self.assertEqual(self.run_row().status, "running")

    def test_a_metric_beyond_its_threshold_stops_the_run(self) -> None:
        self.start()
        answer = post(
            self.loop, RUN + "metrics/", points(("val_loss", 4, 9.5), ("val_loss", 5, 12.5))
        )
        stop = answer.json()["stop"]
        self.assertEqual(stop["rule"], self.rules["metric_threshold"])
        self.assertEqual(stop["step"], 5)
        self.assertIn("above the threshold", stop["reason"])

    def test_a_truncated_input_flag_stops_the_run(self) -> None:
        self.start()
        answer = post(self.loop, RUN + "metrics/", points(("input_truncated", 7, 1)))
        self.assertEqual(answer.json()["stop"]["rule"], self.rules["input_truncated"])

    def test_a_batch_of_more_than_10000_points_is_413_and_stores_nothing(self) -> None:
        self.start()
        answer = post(
            self.loop, RUN + "metrics/", points(*[("loss", s, 1.0) for s in range(10_001)])
        )
        self.assertEqual(answer.status_code, 413)
        self.assertIn("10000", answer.json()["detail"])
        self.assertFalse(MetricPoint.objects.exists())

    def test_a_batch_of_10000_points_is_taken_whole(self) -> None:
        self.start()
        answer = post(
            self.loop, RUN + "metrics/", points(*[("loss", s, 1.0) for s in range(10_000)])
        )
        self.assertEqual(answer.json()["accepted"], 10_000)
        self.assertEqual(MetricPoint.objects.count(), 10_000)

    def test_one_bad_point_refuses_the_whole_batch_and_names_it(self) -> None:
        self.start()
        batch = points(
            ("loss", 1, 2.0), ("loss", -1, 2.0), ("loss", 3, "high"), ("", 4, 1.0), ("a\tb", 5, 1)
        )
        answer = post(self.loop, RUN + "metrics/", batch)
        self.assertEqual(answer.status_code, 400)
        errors = answer.json()["points"]
        self.assertEqual(set(errors), {"1", "2", "3", "4"})
        self.assertIn("name", errors["4"])
        self.assertIn("step", errors["1"])
        self.assertIn("value", errors["2"])
        self.assertIn("name", errors["3"])
        self.assertFalse(MetricPoint.objects.exists())

    def test_it_refuses_bools_and_fractional_steps(self) -> None:
        self.start()
        answer = post(self.loop, RUN + "metrics/", points(("loss", 1, True), ("loss", 2.5, 1.0)))
        self.assertEqual(answer.status_code, 400)
        self.assertEqual(set(answer.json()["points"]), {"0", "1"})

    def test_malformed_json_is_a_json_400(self) -> None:
        self.start()
        answer = self.loop.post(
            RUN + "metrics/", data=b'{"points": [', content_type="application/json"
        )
        self.assertEqual(answer.status_code, 400)
        self.assertIn("JSON parse error", answer.json()["detail"])

    def test_a_body_that_is_not_a_batch_names_what_is_missing(self) -> None:
        self.start()
        for body, field in [([], "non_field_errors"), ({}, "points"), ({"points": 3}, "points")]:
            with self.subTest(body=body):
                answer = post(self.loop, RUN + "metrics/", body)
                self.assertEqual(answer.status_code, 400)
                self.assertIn(field, answer.json())

    def test_metrics_for_an_unknown_run_are_404(self) -> None:
        answer = post(self.loop, "/api/v1/runs/never-created/metrics/", points(("loss", 1, 1.0)))
        self.assertEqual(answer.status_code, 404)
        self.assertEqual(answer["Content-Type"], "application/json")

    def test_a_1000_point_batch_is_one_insert_not_a_thousand(self) -> None:
        self.start()
        batch = points(*[("loss", s, 1.0) for s in range(1000)])
        with CaptureQueriesContext(connection) as queries:
            answer = post(self.loop, RUN + "metrics/", batch)
        self.assertEqual(answer.status_code, 201)
        # PostgreSQL: one COPY; SQLite: bulk_create's few multi-row INSERTs. Never one per point.
        self.assertLess(len(queries), 25)
        self.assertEqual(MetricPoint.objects.count(), 1000)


class ThroughputCheckpointsStopAndFinish(RunApiTestCase):
    def test_it_records_throughput(self) -> None:
        self.start()
        answer = post(
            self.loop,
            RUN + "throughput/",
            {"tokens_per_second": 25_000, "gpus": 2, "measured_seconds": 600},
        )
        self.assertEqual(answer.status_code, 201, answer.content)
        sample = ThroughputSample.objects.get(run=self.run_row())
        self.assertEqual((sample.tokens_per_second, sample.gpus), (25_000, 2))
        self.assertIs(answer.json()["stopped"], False)

    def test_throughput_needs_a_rate_and_positive_gpus(self) -> None:
        self.start()
        for body, field in [
            ({"gpus": 2}, "tokens_per_second"),
            ({"tokens_per_second": 10, "gpus": 0}, "gpus"),
            ({"tokens_per_second": -1}, "tokens_per_second"),
            ({"tokens_per_second": "NaN"}, "tokens_per_second"),
            ({"tokens_per_second": 1, "measured_seconds": -5}, "measured_seconds"),
        ]:
            with self.subTest(body=body):
                answer = post(self.loop, RUN + "throughput/", body)
                self.assertEqual(answer.status_code, 400)
                self.assertIn(field, answer.json())
        self.assertFalse(ThroughputSample.objects.exists())

    def test_a_usable_checkpoint_is_stored_and_the_run_goes_on(self) -> None:
        self.start()
        answer = post(
            self.loop,
            RUN + "checkpoints/",
            {
                "step": 100,
                "components": ["model", "optimizer", "progress", "scheduler"],
                "size_bytes": 14_000_000_000,
                "write_seconds": 42.0,
                "restore_seconds": 30.5,
                "location": "s3://bucket/ckpt/100",
                "resume_verified": True,
            },
        )
        self.assertEqual(answer.status_code, 201, answer.content)
        self.assertIs(answer.json()["stopped"], False)
        checkpoint = Checkpoint.objects.get(run=self.run_row())
        self.assertEqual(checkpoint.components, ["model", "optimizer", "progress", "scheduler"])
        self.assertEqual(self.run_row().status, "running")

    def test_a_checkpoint_of_weights_alone_is_no_usable_resume(self) -> None:
        self.start()
        answer = post(
            self.loop,
            RUN + "checkpoints/",
            {"step": 50, "components": ["model"], "resume_verified": True},
        )
        self.assertEqual(answer.status_code, 201)
        stop = answer.json()["stop"]
        self.assertEqual(stop["rule"], self.rules["no_usable_resume"])
        self.assertIn("missing optimizer, progress", stop["reason"])
        self.assertTrue(Checkpoint.objects.filter(run=self.run_row()).exists())
        self.assertEqual(self.run_row().status, "stopped")

    def test_an_unverified_resume_fires_the_rule(self) -> None:
        self.start()
        body = {"step": 50, "components": ["model", "optimizer", "progress"]}
        answer = post(self.loop, RUN + "checkpoints/", body)
        self.assertIn("resume not verified", answer.json()["stop"]["reason"])

    def test_the_campaigns_required_components_decide_what_is_usable(self) -> None:
        type(self.campaign).objects.filter(pk=self.campaign.pk).update(
            required_checkpoint_components=["model", "optimizer", "progress", "rng"]
        )
        self.start()
        body = {
            "step": 50,
            "components": ["model", "optimizer", "progress"],
            "resume_verified": True,
        }
        answer = post(self.loop, RUN + "checkpoints/", body)
        self.assertIn("missing rng", answer.json()["stop"]["reason"])

    def test_a_checkpoint_behind_the_previous_one_fires_the_rule(self) -> None:
        self.start()
        good = {"components": ["model", "optimizer", "progress"], "resume_verified": True}
        first = post(self.loop, RUN + "checkpoints/", {"step": 200, **good})
        self.assertIs(first.json()["stopped"], False)
        behind = post(self.loop, RUN + "checkpoints/", {"step": 150, **good})
        self.assertIn("step 150 is behind step 200", behind.json()["stop"]["reason"])

    def test_a_checkpoint_may_trail_the_logged_metrics(self) -> None:
        # Loops keep logging while a checkpoint is written: only checkpoints are compared.
        self.start()
        post(self.loop, RUN + "metrics/", points(("loss", 120, 1.0)))
        body = {
            "step": 100,
            "components": ["model", "optimizer", "progress"],
            "resume_verified": True,
        }
        self.assertIs(post(self.loop, RUN + "checkpoints/", body).json()["stopped"], False)

    def test_unknown_checkpoint_components_are_refused_by_name(self) -> None:
        self.start()
        answer = post(self.loop, RUN + "checkpoints/", {"step": 1, "components": ["weights"]})
        self.assertEqual(answer.status_code, 400)
        self.assertIn("components", answer.json())

    def test_a_stop_by_hand_keeps_the_reason_and_refuses_later_points(self) -> None:
        self.start()
        post(self.loop, RUN + "metrics/", points(("loss", 7, 2.0)))
        answer = post(self.loop, RUN + "stop/", {"reason": "the corpus revision was wrong"})
        self.assertEqual(answer.status_code, 200, answer.content)
        self.assertEqual(answer.json()["stop"]["rule"], None)
        self.assertEqual(answer.json()["stop"]["step"], 7)
        self.assertEqual(self.run_row().stop_reason, "the corpus revision was wrong")
        later = post(self.loop, RUN + "metrics/", points(("loss", 8, 1.0)))
        self.assertEqual(later.status_code, 409)
        self.assertIn("corpus revision was wrong", later.json()["stop"]["reason"])

    def test_a_stop_names_a_rule_of_the_runs_own_campaign_only(self) -> None:
        self.start()
        _other = committed_campaign(
            self.team, self.owner, title="other", lots=0, automatic_rules=True
        )
        other_rules = rule_ids(_other)
        foreign = post(
            self.loop, RUN + "stop/", {"reason": "x", "rule": other_rules["non_finite_loss"]}
        )
        self.assertEqual(foreign.status_code, 400)
        self.assertIn("rule", foreign.json())
        self.assertEqual(post(self.loop, RUN + "stop/", {"rule": None}).status_code, 400)
        own = post(self.loop, RUN + "stop/", {"reason": "x", "rule": self.rules["input_truncated"]})
        self.assertEqual(own.json()["stop"]["rule"], self.rules["input_truncated"])
        self.assertEqual(post(self.loop, RUN + "stop/", {"reason": "again"}).status_code, 409)

    def test_finish_completes_the_run_with_its_hours(self) -> None:
        self.start()
        answer = post(self.loop, RUN + "finish/", {"status": "completed", "observed_hours": 1.5})
        self.assertEqual(answer.status_code, 200, answer.content)
        run = self.run_row()
        self.assertEqual((run.status, run.observed_hours), ("completed", Decimal("1.5")))
        self.assertIsNotNone(run.finished_at)
        self.assertEqual(
            post(self.loop, RUN + "metrics/", points(("loss", 1, 1.0))).status_code, 409
        )

    def test_finishing_a_stopped_run_records_its_hours_and_keeps_the_stop(self) -> None:
        self.start()
        post(self.loop, RUN + "metrics/", points(("loss", 3, math.nan)))
        answer = post(self.loop, RUN + "finish/", {"status": "completed", "observed_hours": "2.25"})
        self.assertEqual(answer.json()["status"], "stopped")
        run = self.run_row()
        self.assertEqual((run.status, run.observed_hours), ("stopped", Decimal("2.25")))

    def test_finishing_twice_another_way_is_refused(self) -> None:
        self.start()
        post(self.loop, RUN + "finish/", {"status": "completed", "observed_hours": 1})
        again = post(self.loop, RUN + "finish/", {"status": "completed", "observed_hours": 1})
        self.assertEqual(again.status_code, 200)
        other = post(self.loop, RUN + "finish/", {"status": "failed"})
        self.assertEqual(other.status_code, 409)
        self.assertEqual(self.run_row().status, "completed")

    def test_finish_refuses_negative_hours_and_unknown_statuses(self) -> None:
        self.start()
        for body, field in [
            ({"status": "completed", "observed_hours": -1}, "observed_hours"),
            ({"status": "stopped"}, "status"),
            ({"observed_hours": 1}, "status"),
        ]:
            with self.subTest(body=body):
                answer = post(self.loop, RUN + "finish/", body)
                self.assertEqual(answer.status_code, 400)
                self.assertIn(field, answer.json())
        self.assertEqual(self.run_row().status, "running")

    def test_the_run_detail_shows_status_stop_and_latest_figures(self) -> None:
        self.start()
        post(self.loop, RUN + "metrics/", points(("lr", 1, 1e-4), ("loss", 1, 2.0)))
        post(self.loop, RUN + "throughput/", {"samples_per_second": 12.5})
        post(self.loop, RUN + "metrics/", points(("loss", 2, math.nan)))
        answer = self.loop.get(RUN)
        self.assertEqual(answer.status_code, 200)
        body = json.loads(answer.content)  # strict JSON: NaN travels as a string
        self.assertEqual(body["status"], "stopped")
        self.assertEqual(body["stop"]["rule"], self.rules["non_finite_loss"])
        self.assertIsNotNone(body["stop"]["at"])
        self.assertEqual(body["latest"]["metrics"]["loss"], {"step": 2, "value": "NaN"})
        self.assertEqual(body["latest"]["metrics"]["lr"], {"step": 1, "value": 1e-4})
        self.assertEqual(body["latest"]["throughput"]["samples_per_second"], 12.5)
        self.assertEqual(body["latest"]["points"], 3)
        self.assertNotIn(b"NaN,", answer.content)


class AFullFlowThroughTheApi(TestCase):
    """Plan, commit and log a run, as a planner's script and a training loop would."""

    @classmethod
    def setUpTestData(cls) -> None:
        cls.team = Team.objects.create(name="vision")
        cls.planner = make_user("pia", team=cls.team, role="planner")

    def test_a_planner_plans_commits_and_a_run_is_stopped_by_its_rule(self) -> None:
        desk = as_user(self.planner)
        created = post(
            desk,
            "/api/v1/campaigns/",
            {
                "title": "LoRA vs full fine-tuning",
                "question": "Does LoRA r16 beat the baseline by 1 F1?",
                "corpus": {"name": "tickets", "revision": "abc123"},
                "window_hours": 72,
                "budget": "110.00",
                "currency": "USD",
            },
        )
        self.assertEqual(created.status_code, 201, created.content)
        campaign = created.json()["id"]
        base = f"/api/v1/campaigns/{campaign}/"
        baseline = post(
            desk,
            base + "variants/",
            {"name": "baseline", "role": "baseline", "tier": "mandatory", "planned_hours": "10"},
        )
        self.assertEqual(baseline.status_code, 201, baseline.content)
        rule = post(desk, base + "stop-rules/", {"kind": "non_finite_loss", "metric": "loss"})
        self.assertEqual(rule.status_code, 201, rule.content)
        committed = post(desk, base + "commit/")
        self.assertEqual(committed.status_code, 200, committed.content)
        self.assertEqual(committed.json()["status"], "committed")

        run = post(
            desk,
            base + "runs/",
            {"run_id": "base-1", "variant": baseline.json()["id"], "kind": "pilot"},
        )
        self.assertEqual(run.status_code, 201, run.content)
        logged = post(desk, "/api/v1/runs/base-1/metrics/", points(("loss", 1, math.nan)))
        self.assertEqual(logged.json()["stop"]["rule"], rule.json()["id"])
        finished = post(desk, "/api/v1/runs/base-1/finish/", {"status": "failed"})
        self.assertEqual(finished.json()["status"], "stopped")
        listed = desk.get(base + "runs/")
        self.assertEqual([r["run_id"] for r in listed.json()["results"]], ["base-1"])


@pytest.mark.postgres
class NonFiniteValuesOnPostgres(RunApiTestCase):
    def test_postgres_keeps_nan_and_infinities_in_the_float_column_itself(self) -> None:
        self.start()
        post(
            self.loop,
            RUN + "metrics/",
            points(("g", 1, math.nan), ("g", 2, math.inf), ("g", 3, -math.inf), ("g", 4, 1e308)),
        )
        values = dict(MetricPoint.objects.values_list("step", "value"))
        self.assertTrue(math.isnan(values[1]))
        self.assertEqual((values[2], values[3], values[4]), (math.inf, -math.inf, 1e308))
        # PostgreSQL orders NaN above every number, so SQL filters must not stand in for the
        # rules; the token column marks exactly the non-finite rows.
        tokens = dict(MetricPoint.objects.values_list("step", "non_finite"))
        self.assertEqual(tokens, {1: "NaN", 2: "Infinity", 3: "-Infinity", 4: ""})

    def test_copy_keeps_awkward_names_and_extreme_values_exactly(self) -> None:
        self.start()
        awkward = [("eval\\loss", 1, 5e-324), ("pérdida/ü", 2, -0.0), ("x", 3, 0.1 + 0.2)]
        self.assertEqual(post(self.loop, RUN + "metrics/", points(*awkward)).status_code, 201)
        stored = list(MetricPoint.objects.order_by("step").values_list("key__name", "value"))
        self.assertEqual(stored, [(n, v) for n, _s, v in awkward])


class ReadingMetrics(RunApiTestCase):
    def setUp(self) -> None:
        super().setUp()
        self.start()
        triples = [("loss", s, 2.0 - s / 1000) for s in range(300)]
        triples[150] = ("loss", 150, 99.0)
        triples += [("lr", s, 1e-4) for s in range(5)]
        post(self.loop, f"{RUN}metrics/", points(*triples))
        post(self.loop, f"{RUN}metrics/", points(("loss", 300, math.inf), ("loss", 301, 0.5)))

    def test_x_cost_gives_each_point_its_cost_so_far(self) -> None:
        from decimal import Decimal

        from campaigns.models import Campaign

        unpriced = as_user(self.owner).get(f"{RUN}metrics/", {"name": "loss", "x": "cost"})
        self.assertEqual(unpriced.status_code, 200)
        self.assertTrue(all(p["cost"] is None for p in unpriced.json()["points"]))
        # Hourly pricing (set here directly: the plan is committed), then a finished run's
        # 2 h × 1 GPU × 3.00 are spread over its steps.
        Campaign.objects.filter(pk=self.campaign.pk).update(hourly_rate_per_gpu=Decimal("3.00"))
        post(self.loop, f"{RUN}finish/", {"status": "completed", "observed_hours": 2})
        answer = as_user(self.owner).get(
            f"{RUN}metrics/", {"name": "loss", "x": "cost", "max_points": 50}
        )
        costs = [Decimal(p["cost"]) for p in answer.json()["points"]]
        self.assertEqual(costs, sorted(costs))
        self.assertEqual(costs[-1], Decimal("6.00"))
        bad = as_user(self.owner).get(f"{RUN}metrics/", {"name": "loss", "x": "dollars"})
        self.assertEqual(bad.status_code, 400)
        self.assertIn("x", bad.json())

    def test_without_a_name_it_lists_the_metric_names_with_counts(self) -> None:
        answer = self.loop.get(f"{RUN}metrics/")
        self.assertEqual(answer.status_code, 200)
        self.assertEqual(
            answer.json(),
            {
                "run_id": "lora-r16-s1",
                "metrics": [{"name": "loss", "count": 302}, {"name": "lr", "count": 5}],
            },
        )

    def test_with_a_name_it_downsamples_keeping_the_spike_the_infinity_and_the_last_point(
        self,
    ) -> None:
        answer = as_user(self.owner).get(f"{RUN}metrics/", {"name": "loss", "max_points": 20})
        self.assertEqual(answer.status_code, 200)
        body = answer.json()
        self.assertEqual((body["count"], body["max_points"]), (302, 20))
        self.assertLessEqual(len(body["points"]), 20)
        self.assertEqual(body["returned"], len(body["points"]))
        self.assertIn({"step": 150, "value": 99.0}, body["points"])
        self.assertIn({"step": 300, "value": "Infinity"}, body["points"])
        self.assertEqual(body["points"][-1], {"step": 301, "value": 0.5})

    def test_it_refuses_a_max_points_out_of_range_naming_the_field(self) -> None:
        for bad in ("1", "10001", "many"):
            answer = self.loop.get(f"{RUN}metrics/", {"name": "loss", "max_points": bad})
            self.assertEqual(answer.status_code, 400, bad)
            self.assertIn("max_points", answer.json())

    def test_the_read_is_a_fixed_number_of_queries(self) -> None:
        client = as_user(self.owner)
        with CaptureQueriesContext(connection) as queries:
            client.get(f"{RUN}metrics/", {"name": "loss", "max_points": 50})
        self.assertLessEqual(len(queries), 8)

    def test_another_teams_user_gets_404(self) -> None:
        other = make_user("eve", team=Team.objects.create(name="vision"), role="owner")
        self.assertEqual(as_user(other).get(f"{RUN}metrics/").status_code, 404)
