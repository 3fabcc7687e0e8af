"""The Python client (campaign_desk_client) against real HTTP servers.

`RetryPolicy` drives the client against a tiny scripted http.server on 127.0.0.1, to see what it
sends on the wire (retries, Idempotency-Key, NaN tokens, batch sizes). `TrainingLoopOnALiveServer`
drives it against Campaign Desk itself, served by Django's live server on the test database.
"""

from __future__ import annotations

import json
import math
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from decimal import Decimal
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from django.test import LiveServerTestCase, SimpleTestCase

from campaign_desk_client import ApiError, CampaignDesk, DeskUnavailable, RunStopped
from campaign_desk_client import Run as ClientRun
from campaigns.models import (
    Checkpoint,
    MetricPoint,
    Run,
    StopRule,
    Team,
    ThroughputSample,
)
from campaigns.services.keys import issue_api_token, issue_ingest_key
from campaigns.services.plans import commit_plan
from campaigns.tests.factories import make_plannable, make_user

# --- A scripted HTTP server on loopback ---------------------------------------------------


@dataclass
class Answer:
    status: int
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    drop: bool = False  # close the connection without answering


@dataclass
class Seen:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


class Script:
    """Answers in order (the last one repeats) and remembers every request."""

    def __init__(self, *answers: Answer | Any) -> None:
        self.answers = list(answers)
        self.seen: list[Seen] = []
        self.lock = threading.Lock()

    def next(self, request: Seen) -> Answer:
        with self.lock:
            self.seen.append(request)
            answer = self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]
        return answer(request) if callable(answer) else answer


@contextmanager
def loopback(script: Script) -> Iterator[str]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def handle_one(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            seen = Seen(
                self.command, self.path, dict(self.headers.items()), self.rfile.read(length)
            )
            answer = script.next(seen)
            if answer.drop:
                self.close_connection = True
                return
            payload = b"" if answer.body is None else json.dumps(answer.body).encode()
            self.send_response(answer.status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            for name, value in answer.headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(payload)

        do_GET = do_POST = handle_one

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def quick_desk(url: str, key: str = "cdk_test", **options: Any) -> CampaignDesk:
    """A client whose backoff is milliseconds, so retries do not slow the suite."""
    options.setdefault("backoff", 0.01)
    options.setdefault("max_backoff", 0.05)
    return CampaignDesk(url, key, **options)


def accept(request: Seen) -> Answer:
    """Accept a metrics batch as the server would; answer anything else with a plain 200."""
    if not request.path.endswith("/metrics/"):
        return Answer(200, {"run_id": "r1", "status": "completed"})
    points = request.json()["points"]
    return Answer(201, {"accepted": len(points), "stopped": False, "stop": None})


RUN = Answer(201, {"run_id": "r1", "status": "running"})


class RetryPolicy(SimpleTestCase):
    def test_it_retries_a_503_with_the_same_idempotency_key_and_returns_the_201(self) -> None:
        script = Script(Answer(503, {"detail": "busy"}), Answer(201, {"ok": True}))
        with loopback(script) as url:
            answer = quick_desk(url).request("POST", "/runs/r1/stop/", {"reason": "manual"})
        self.assertEqual(answer.status, 201)
        self.assertEqual(answer.body, {"ok": True})
        self.assertEqual(len(script.seen), 2)
        keys = [seen.headers.get("Idempotency-Key") for seen in script.seen]
        self.assertIsNotNone(keys[0])
        self.assertEqual(keys[0], keys[1])
        self.assertEqual(answer.idempotency_key, keys[0])
        self.assertEqual(script.seen[0].body, script.seen[1].body)

    def test_it_retries_a_dropped_connection_with_the_same_key(self) -> None:
        script = Script(Answer(0, drop=True), Answer(502), Answer(201, {"ok": True}))
        with loopback(script) as url:
            answer = quick_desk(url).request("POST", "/runs/r1/stop/", {"reason": "x"})
        self.assertEqual(answer.status, 201)
        self.assertEqual(len(script.seen), 3)
        self.assertEqual(len({seen.headers["Idempotency-Key"] for seen in script.seen}), 1)

    def test_it_gives_every_logical_post_its_own_key(self) -> None:
        script = Script(Answer(201, {}))
        with loopback(script) as url:
            desk = quick_desk(url)
            desk.request("POST", "/runs/r1/stop/", {"reason": "x"})
            desk.request("POST", "/runs/r1/stop/", {"reason": "x"})
        keys = {seen.headers["Idempotency-Key"] for seen in script.seen}
        self.assertEqual(len(keys), 2)

    def test_it_honours_retry_after_on_a_429(self) -> None:
        waits: list[float] = []
        script = Script(Answer(429, {"detail": "slow down"}, {"Retry-After": "7"}), Answer(200, {}))
        with loopback(script) as url:
            quick_desk(url, sleep=waits.append).request("GET", "/runs/r1/")
        self.assertEqual(len(waits), 1)
        self.assertGreaterEqual(waits[0], 7.0)
        self.assertLess(waits[0], 7.1)

    def test_it_backs_off_exponentially_and_gives_up_after_max_retries(self) -> None:
        waits: list[float] = []
        script = Script(Answer(503, {"detail": "down"}))
        with loopback(script) as url:
            desk = CampaignDesk(url, "cdk_x", backoff=1.0, max_backoff=100, max_retries=4,
                                sleep=waits.append)  # fmt: skip
            with self.assertRaises(DeskUnavailable) as caught:
                desk.request("POST", "/runs/r1/stop/", {"reason": "x"})
        self.assertEqual(caught.exception.status, 503)
        self.assertEqual(caught.exception.body, {"detail": "down"})
        self.assertEqual(len(script.seen), 5)
        # Attempt n waits a random time in [d/2, d] with d = 2**n seconds.
        for n, wait in enumerate(waits):
            self.assertGreaterEqual(wait, 2**n / 2)
            self.assertLessEqual(wait, 2**n)

    def test_it_gives_up_on_an_unreachable_server_with_a_connection_error(self) -> None:
        with loopback(Script(Answer(200))) as url:
            pass  # the port is closed again: nothing listens there now
        waits: list[float] = []
        desk = quick_desk(url, max_retries=2, sleep=waits.append)
        with self.assertRaises(DeskUnavailable) as caught:
            desk.request("GET", "/runs/r1/")
        self.assertIsNone(caught.exception.status)
        self.assertIsInstance(caught.exception.__cause__, OSError)
        self.assertEqual(len(waits), 2)

    def test_it_retries_the_409_of_a_key_still_in_flight_but_not_another_409(self) -> None:
        in_flight = {"detail": "A request with this Idempotency-Key is still in progress; retry."}
        script = Script(Answer(409, in_flight), Answer(201, {"ok": True}))
        with loopback(script) as url:
            answer = quick_desk(url).request("POST", "/runs/r1/stop/", {"reason": "x"})
        self.assertEqual(answer.status, 201)
        self.assertEqual(script.seen[0].headers["Idempotency-Key"], answer.idempotency_key)
        script = Script(Answer(409, {"detail": "run 'r1' is finished (completed)"}))
        with loopback(script) as url, self.assertRaises(ApiError) as caught:
            quick_desk(url).request("POST", "/runs/r1/stop/", {"reason": "x"})
        self.assertEqual(caught.exception.status, 409)
        self.assertEqual(len(script.seen), 1)

    def test_it_does_not_retry_a_400_and_raises_api_error_with_the_json_body(self) -> None:
        script = Script(Answer(400, {"points": ["step must be >= 0"]}))
        with loopback(script) as url, self.assertRaises(ApiError) as caught:
            quick_desk(url).request("POST", "/runs/r1/metrics/", {"points": []})
        self.assertEqual(caught.exception.status, 400)
        self.assertEqual(caught.exception.body, {"points": ["step must be >= 0"]})
        self.assertNotIsInstance(caught.exception, DeskUnavailable)
        self.assertEqual(len(script.seen), 1)

    def test_it_does_not_follow_a_redirect_of_a_post(self) -> None:
        script = Script(Answer(301, headers={"Location": "https://desk.example.org/api/v1/x/"}))
        with loopback(script) as url, self.assertRaises(ApiError) as caught:
            quick_desk(url).request("POST", "/runs/r1/stop/", {"reason": "x"})
        self.assertEqual(caught.exception.status, 301)
        self.assertIn("https://desk.example.org", str(caught.exception))
        self.assertEqual(len(script.seen), 1)

    def test_it_sends_an_ingest_key_as_bearer_and_a_user_token_as_token(self) -> None:
        script = Script(Answer(200, {}))
        with loopback(script) as url:
            quick_desk(url + "/api/v1/", "cdk_abc").request("GET", "/health/")
            quick_desk(url, "0123abcd").request("GET", "/health/")
        self.assertEqual(script.seen[0].headers["Authorization"], "Bearer cdk_abc")
        self.assertEqual(script.seen[1].headers["Authorization"], "Token 0123abcd")
        self.assertEqual([s.path for s in script.seen], ["/api/v1/health/"] * 2)

    def test_it_writes_nan_and_infinity_as_the_bare_tokens_of_pythons_json(self) -> None:
        script = Script(RUN, accept)
        with loopback(script) as url:
            run = quick_desk(url).run(campaign=1, run_id="r1")
            run.log(1, loss=math.nan, grad=math.inf, neg=-math.inf, ok=0.5)
            run.flush()
        body = script.seen[1].body.decode()
        self.assertIn('"value":NaN', body)
        self.assertIn('"value":Infinity', body)
        self.assertIn('"value":-Infinity', body)
        self.assertIn('"value":0.5', body)

    def test_it_batches_points_and_never_sends_more_than_10000_in_a_request(self) -> None:
        script = Script(RUN, accept)
        with loopback(script) as url:
            run = quick_desk(url).run(campaign=1, run_id="r1", flush_points=10_000)
            for step in range(12_500):
                run.log(step, loss=1.0, lr=1e-4)  # 25,000 points
            run.finish()
        batches = [len(s.json()["points"]) for s in script.seen if s.path.endswith("/metrics/")]
        self.assertEqual(batches, [10_000, 10_000, 5_000])
        self.assertEqual(run.accepted, 25_000)
        self.assertTrue(script.seen[-1].path.endswith("/runs/r1/finish/"))

    def test_it_refuses_a_batch_size_the_server_would_refuse(self) -> None:
        with self.assertRaises(ValueError):
            ClientRun(quick_desk("http://127.0.0.1:9"), "r1", {}, flush_points=10_001)

    def test_it_flushes_after_flush_seconds_even_with_few_points(self) -> None:
        script = Script(RUN, accept)
        with loopback(script) as url:
            run = quick_desk(url).run(campaign=1, run_id="r1", flush_seconds=0.0)
            run.log(1, loss=2.0)
            self.assertEqual(run.pending_points, 0)
            self.assertEqual(len(script.seen), 2)

    def test_a_failed_flush_keeps_the_points_and_resends_them_with_the_same_key(self) -> None:
        script = Script(RUN, Answer(503), Answer(503), accept)
        with loopback(script) as url:
            run = quick_desk(url, max_retries=1).run(campaign=1, run_id="r1")
            run.log(1, loss=2.0)
            with self.assertRaises(DeskUnavailable):
                run.flush()
            self.assertEqual(run.pending_points, 1)
            run.log(2, loss=1.5)
            self.assertEqual(run.flush(), 2)
        posts = [s for s in script.seen if s.path.endswith("/metrics/")]
        self.assertEqual(len(posts), 4)  # 503, 503 (retry), then the same batch, then the new one
        self.assertEqual(posts[0].headers["Idempotency-Key"], posts[2].headers["Idempotency-Key"])
        self.assertEqual(posts[0].body, posts[2].body)
        self.assertNotEqual(
            posts[2].headers["Idempotency-Key"], posts[3].headers["Idempotency-Key"]
        )


# --- Against Campaign Desk itself ---------------------------------------------------------


class TrainingLoopOnALiveServer(LiveServerTestCase):
    """A committed campaign with two stop rules and an ingest key; the client is the loop."""

    def setUp(self) -> None:
        self.team = Team.objects.create(name="nlp")
        self.owner = make_user("olga", team=self.team, role="owner")
        self.campaign = make_plannable(self.team)
        self.threshold_rule = StopRule.objects.create(
            campaign=self.campaign,
            kind="metric_threshold",
            metric="val_loss",
            comparator="gt",
            threshold=10.0,
        )
        self.resume_rule = StopRule.objects.create(campaign=self.campaign, kind="no_usable_resume")
        commit_plan(campaign=self.campaign, acting_user=self.owner)
        self.nan_rule = StopRule.objects.get(campaign=self.campaign, kind="non_finite_loss")
        self.baseline = self.campaign.items.get(name="baseline")
        _, raw = issue_ingest_key(campaign=self.campaign, acting_user=self.owner)
        self.desk = quick_desk(self.live_server_url, raw)

    def start(self, run_id: str = "lora-r16-s1", **options: Any) -> Any:
        options.setdefault("config", {"lr": 2e-4, "rank": 16})
        return self.desk.run(
            campaign=self.campaign.pk, run_id=run_id, variant=self.baseline.pk, kind="pilot",
            **options,
        )  # fmt: skip

    def stored(self, run_id: str = "lora-r16-s1") -> Run:
        return Run.objects.get(team=self.team, run_id=run_id)

    def test_it_creates_a_run_and_takes_it_up_again_with_the_same_config(self) -> None:
        first = self.start()
        again = self.start()
        self.assertTrue(first.created)
        self.assertFalse(again.created)
        self.assertFalse(again.stopped)
        run = self.stored()
        self.assertEqual(run.campaign_id, self.campaign.pk)
        self.assertEqual(run.variant_id, self.baseline.pk)
        self.assertEqual(run.kind, "pilot")
        self.assertEqual(run.config, {"lr": 2e-4, "rank": 16})

    def test_it_refuses_the_same_run_id_with_another_config(self) -> None:
        self.start()
        with self.assertRaises(ApiError) as caught:
            self.start(config={"lr": 1e-3, "rank": 16})
        self.assertEqual(caught.exception.status, 409)
        self.assertEqual(Run.objects.filter(team=self.team).count(), 1)

    def test_it_sends_points_in_batches_and_the_server_keeps_every_one(self) -> None:
        run = self.start(flush_points=100)
        for step in range(125):
            run.log(step, loss=3.0 - step / 100, lr=1e-4)
        self.assertEqual(run.pending_points, 50)  # 200 sent in two batches, 50 still waiting
        self.assertEqual(MetricPoint.objects.filter(run=self.stored()).count(), 200)
        self.assertEqual(run.flush(), 50)
        points = MetricPoint.objects.filter(run=self.stored())
        self.assertEqual(points.count(), 250)
        self.assertEqual(run.accepted, 250)
        self.assertAlmostEqual(points.get(key__name="loss", step=124).as_float(), 1.76)

    def test_a_nan_loss_stops_the_run_and_the_client_says_which_rule_and_why(self) -> None:
        run = self.start()
        run.log(10, loss=2.31)
        run.log(20, loss=math.nan)
        with self.assertRaises(RunStopped) as caught:
            run.flush()
        stop = caught.exception
        self.assertEqual(stop.run_id, "lora-r16-s1")
        self.assertEqual(stop.rule, self.nan_rule.pk)
        self.assertIn("NaN", stop.reason)
        self.assertTrue(run.stopped)
        self.assertEqual(run.stop_rule, self.nan_rule.pk)
        self.assertEqual(run.stop_reason, stop.reason)
        stored = self.stored()
        self.assertEqual(stored.status, "stopped")
        self.assertEqual(stored.stop_rule_id, self.nan_rule.pk)
        self.assertEqual(stored.stop_reason, stop.reason)
        nan = MetricPoint.objects.get(run=stored, step=20)
        self.assertTrue(math.isnan(nan.as_float()))
        with self.assertRaises(RunStopped):
            run.log(30, loss=1.0)  # every later log says so too
        self.assertEqual(MetricPoint.objects.filter(run=stored).count(), 2)

    def test_a_loop_in_a_with_block_ends_quietly_at_the_stop(self) -> None:
        steps_run = []
        with self.start(flush_points=1) as run:
            for step in range(100):
                steps_run.append(step)
                run.log(step, val_loss=12.5 if step == 4 else 1.0)
        self.assertEqual(steps_run, [0, 1, 2, 3, 4])
        self.assertTrue(run.stopped)
        self.assertEqual(run.stop_rule, self.threshold_rule.pk)
        self.assertIn("val_loss", run.stop_reason or "")
        self.assertEqual(self.stored().status, "stopped")

    def test_a_stop_made_elsewhere_reaches_the_loop_on_its_next_send(self) -> None:
        run = self.start()
        run.log(1, loss=2.0)
        run.flush()
        # A planner stops it from elsewhere, with their own API token.
        planner = quick_desk(self.live_server_url, issue_api_token(owner=self.owner)[1])
        planner.post("/runs/lora-r16-s1/stop/", {"reason": "the corpus revision was wrong"})
        run.log(2, loss=1.9)
        with self.assertRaises(RunStopped) as caught:
            run.flush()
        self.assertIsNone(caught.exception.rule)
        self.assertIn("corpus revision was wrong", caught.exception.reason)
        self.assertEqual(MetricPoint.objects.filter(run=self.stored()).count(), 1)

    def test_a_replayed_metrics_request_with_one_key_is_recorded_once(self) -> None:
        self.start()
        body = {"points": [{"name": "loss", "step": s, "value": 2.0} for s in range(50)]}
        first = self.desk.request("POST", "/runs/lora-r16-s1/metrics/", body, idempotency_key="k-1")
        retry = self.desk.request("POST", "/runs/lora-r16-s1/metrics/", body, idempotency_key="k-1")
        self.assertEqual(first.status, 201)
        self.assertEqual(retry.status, first.status)
        self.assertEqual(retry.body, first.body)
        self.assertEqual(first.body["accepted"], 50)
        self.assertEqual(MetricPoint.objects.filter(run=self.stored()).count(), 50)

    def test_the_same_key_with_another_body_is_refused(self) -> None:
        self.start()
        path = "/runs/lora-r16-s1/metrics/"
        self.desk.request("POST", path, {"points": [{"name": "loss", "step": 1, "value": 2.0}]},
                          idempotency_key="k-2")  # fmt: skip
        with self.assertRaises(ApiError) as caught:
            self.desk.request("POST", path, {"points": [{"name": "loss", "step": 2, "value": 1.0}]},
                              idempotency_key="k-2")  # fmt: skip
        self.assertEqual(caught.exception.status, 422)
        self.assertEqual(MetricPoint.objects.filter(run=self.stored()).count(), 1)

    def test_it_records_throughput_and_a_checkpoint_and_finishes_the_run(self) -> None:
        run = self.start()
        run.log(100, loss=1.2)
        run.throughput(tokens_per_second=25_000, gpus=2, measured_seconds=600)
        run.checkpoint(
            step=100,
            components=["model", "optimizer", "progress", "scheduler"],
            size_bytes=14_000_000_000,
            write_seconds=42.0,
            restore_seconds=30.5,
            location="s3://bucket/ckpt/100",
            resume_verified=True,
        )
        run.finish(observed_hours=1.5)
        stored = self.stored()
        self.assertEqual(stored.status, "completed")
        self.assertEqual(stored.observed_hours, Decimal("1.5"))
        self.assertEqual(MetricPoint.objects.filter(run=stored).count(), 1)
        sample = ThroughputSample.objects.get(run=stored)
        self.assertEqual((sample.tokens_per_second, sample.gpus), (25_000, 2))
        checkpoint = Checkpoint.objects.get(run=stored)
        self.assertEqual(checkpoint.step, 100)
        self.assertTrue(checkpoint.resume_verified)
        self.assertEqual(checkpoint.location, "s3://bucket/ckpt/100")
        self.assertEqual(self.desk.get_run("lora-r16-s1")["status"], "completed")

    def test_a_checkpoint_that_cannot_resume_stops_the_run_and_the_next_log_says_so(self) -> None:
        run = self.start()
        run.log(50, loss=1.4)
        answer = run.checkpoint(step=50, components=["model"], resume_verified=False)
        self.assertTrue(answer["stopped"])
        self.assertTrue(run.stopped)
        self.assertEqual(run.stop_rule, self.resume_rule.pk)
        self.assertIn("optimizer", run.stop_reason or "")
        with self.assertRaises(RunStopped) as caught:
            run.log(51, loss=1.3)
        self.assertEqual(caught.exception.rule, self.resume_rule.pk)
        run.finish(observed_hours=0.25)  # a stopped run's hours still count
        stored = self.stored()
        self.assertEqual(stored.status, "stopped")
        self.assertEqual(stored.observed_hours, Decimal("0.25"))
        self.assertEqual(MetricPoint.objects.filter(run=stored).count(), 1)

    def test_leaving_a_with_block_sends_the_last_points_and_completes_the_run(self) -> None:
        with self.start() as run:
            for step in range(7):
                run.log(step, loss=2.0)
        stored = self.stored()
        self.assertEqual(stored.status, "completed")
        self.assertEqual(MetricPoint.objects.filter(run=stored).count(), 7)

    def test_an_error_in_the_block_fails_the_run_and_goes_on(self) -> None:
        with self.assertRaises(ZeroDivisionError), self.start() as run:
            run.log(1, loss=2.0)
            _ = 1 / 0
        stored = self.stored()
        self.assertEqual(stored.status, "failed")
        self.assertEqual(MetricPoint.objects.filter(run=stored).count(), 1)

    def test_an_interrupted_block_sends_its_points_and_leaves_the_run_open(self) -> None:
        with self.assertRaises(KeyboardInterrupt), self.start() as run:
            run.log(1, loss=2.0)
            raise KeyboardInterrupt
        stored = self.stored()
        self.assertEqual(stored.status, "running")
        self.assertEqual(MetricPoint.objects.filter(run=stored).count(), 1)

    def test_it_reads_the_stopped_run_back_with_its_rule_and_reason(self) -> None:
        run = self.start()
        run.log(5, loss=math.inf)
        with self.assertRaises(RunStopped):
            run.flush()
        again = self.start()  # a restarted job takes the run up again: it is stopped
        self.assertTrue(again.stopped)
        self.assertEqual(again.stop_rule, self.nan_rule.pk)
        self.assertEqual(again.stop_reason, run.stop_reason)
        with self.assertRaises(RunStopped):
            again.log(6, loss=1.0)

    def test_a_wrong_key_is_an_api_error_and_is_not_retried(self) -> None:
        waits: list[float] = []
        desk = quick_desk(self.live_server_url, "cdk_not-a-key", sleep=waits.append)
        with self.assertRaises(ApiError) as caught:
            desk.run(campaign=self.campaign.pk, run_id="x", variant=self.baseline.pk)
        self.assertIn(caught.exception.status, (401, 403))
        self.assertEqual(waits, [])
        self.assertFalse(Run.objects.exists())
