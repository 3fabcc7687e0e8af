"""The real MLflow client (mlflow-skinny), unchanged, against Campaign Desk on a live server.

Only the two environment variables of docs/mlflow.md are set (plus a short retry backoff, so
the retry test does not sleep for seconds): MLFLOW_TRACKING_URI and MLFLOW_TRACKING_TOKEN.
"""

from __future__ import annotations

import hashlib
import http.client
import math
import os
import shutil
import tempfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlparse

import mlflow
import requests
from django.test import override_settings
from mlflow import MlflowClient
from mlflow.entities import (
    Dataset,
    DatasetInput,
    InputTag,
    LoggedModelOutput,
    LoggedModelStatus,
    Metric,
    Param,
    RunTag,
)
from mlflow.exceptions import MlflowException

from campaigns.models import (
    Campaign,
    MetricPoint,
    PlannedItem,
    Run,
    RunArtifact,
    Team,
)
from campaigns.services.keys import issue_api_token, issue_ingest_key
from campaigns.services.plans import commit_plan
from campaigns.tests.factories import as_key, make_plannable, make_user
from mlflow_api.models import LoggedModel
from mlflow_api.tests.live import MlflowLiveCase


class MlflowLoopTestCase(MlflowLiveCase):
    # --- A typical loop --------------------------------------------------------------------

    def test_params_metrics_tags_and_artifacts_land_on_the_campaign_run(self) -> None:
        with self.tracking(self.key):
            experiment = mlflow.set_experiment("whatever the script calls it")  # a named one
            self.assertTrue(experiment.experiment_id.startswith(f"{self.campaign.pk}-"))
            self.assertEqual(experiment.name, "whatever the script calls it")
            with mlflow.start_run(run_name="lora-r16-s1", tags={"team": "nlp"}) as active:
                mlflow.log_params({"lr": 2e-4, "rank": 16})
                for step in range(5):
                    mlflow.log_metric("loss", 2.0 - step / 10, step=step)
                mlflow.log_metrics({"loss": 1.4, "val_loss": 1.6}, step=5)
                mlflow.set_tag("stage", "pilot")
                mlflow.log_dict({"labels": ["a", "b"]}, "config/labels.json")
                mlflow.log_text("all good\n", "notes.txt")
                with mlflow.start_run(run_name="lora-r16-s1-eval", nested=True):
                    mlflow.log_metric("f1", 0.71)
                run_id = active.info.run_id
            fetched = mlflow.get_run(run_id)
            notes = mlflow.artifacts.load_text(f"{active.info.artifact_uri}/notes.txt")

        run = self.run_row("lora-r16-s1")
        self.assertEqual(run.run_id, run_id)
        self.assertEqual(fetched.info.run_name, "lora-r16-s1")
        self.assertEqual(run.campaign_id, self.campaign.pk)
        self.assertEqual(run.variant_id, self.baseline.pk)
        self.assertEqual(run.kind, "pilot")
        self.assertEqual(run.config, {"lr": "0.0002", "rank": "16"})
        self.assertEqual(run.status, "completed")
        self.assertIsNotNone(run.observed_hours)
        self.assertEqual(run.tags["team"], "nlp")
        self.assertEqual(run.tags["stage"], "pilot")
        self.assertIn("mlflow.source.name", run.tags)  # system tags kept as they came
        self.assertEqual(MetricPoint.objects.filter(run=run, key__name="loss").count(), 6)
        self.assertEqual(MetricPoint.objects.filter(run=run, key__name="val_loss").count(), 1)

        nested = self.run_row("lora-r16-s1-eval")
        self.assertEqual(nested.tags["mlflow.parentRunId"], run_id)
        self.assertEqual(MetricPoint.objects.get(run=nested).value, 0.71)

        self.assertEqual(fetched.data.params, {"lr": "0.0002", "rank": "16"})
        self.assertEqual(fetched.data.metrics, {"loss": 1.4, "val_loss": 1.6})
        self.assertEqual(fetched.data.tags["stage"], "pilot")
        self.assertEqual(fetched.info.status, "FINISHED")
        self.assertEqual(notes, "all good\n")

        notes_row = RunArtifact.objects.get(run=run, path="notes.txt")
        self.assertEqual(notes_row.size_bytes, 9)
        self.assertEqual(notes_row.sha256, hashlib.sha256(b"all good\n").hexdigest())
        detail = as_key(self.key).get(f"/api/v1/runs/{run_id}/").json()
        self.assertEqual(
            {(a["path"], a["size_bytes"]) for a in detail["artifacts"]},
            {
                (
                    "config/labels.json",
                    notes_row.run.artifacts.get(path="config/labels.json").size_bytes,
                ),
                ("notes.txt", 9),
            },
        )
        self.assertEqual(detail["config"], {"lr": "0.0002", "rank": "16"})

    def test_the_item_and_kind_come_from_the_desk_tags(self) -> None:
        variant = PlannedItem.objects.get(campaign=self.campaign, name="variant A")
        with self.tracking(self.key):
            mlflow.set_experiment("x")
            tags = {"desk.variant": "variant A", "desk.kind": "full"}
            with mlflow.start_run(run_name="variant-a-full", tags=tags):
                mlflow.log_metric("loss", 1.0)
        run = self.run_row("variant-a-full")
        self.assertEqual((run.variant_id, run.kind), (variant.pk, "full"))

    # --- Stop rules stop MLflow loops ------------------------------------------------------

    def test_nan_stops_the_run_and_the_next_log_metric_raises_with_the_rules_reason(self) -> None:
        with self.tracking(self.key):
            mlflow.set_experiment("x")
            with (
                self.assertRaises(MlflowException) as raised,
                mlflow.start_run(run_name="diverges") as active,
            ):
                for step in range(10, 40, 10):
                    loss = math.nan if step == 20 else 1.0
                    mlflow.log_metric("loss", loss, step=step)
            fetched = mlflow.get_run(active.info.run_id)

        message = str(raised.exception)
        self.assertEqual(raised.exception.error_code, "INVALID_STATE")
        self.assertIn(f"run {active.info.run_id} was stopped by rule #{self.nan_rule.pk}:", message)
        self.assertIn("loss is NaN at step 20", message)
        run = self.run_row("diverges")
        # The NaN is stored (evidence); the step-30 point was refused; the failed end_run of
        # the with-block leaves the run stopped, with its hours.
        self.assertEqual(
            list(run.metrics.order_by("step").values_list("step", flat=True)), [10, 20]
        )
        self.assertEqual(run.status, "stopped")
        self.assertIsNotNone(run.finished_at)
        self.assertEqual(fetched.info.status, "KILLED")
        self.assertTrue(math.isnan(fetched.data.metrics["loss"]))

    def test_a_stopped_run_refuses_params_and_tags_too(self) -> None:
        with self.tracking(self.key):
            mlflow.set_experiment("x")
            run = mlflow.start_run(run_name="stopped-early")
            mlflow.log_metric("loss", math.inf, step=3)
            for call in (
                lambda: mlflow.log_param("lr", "1e-4"),
                lambda: mlflow.set_tag("k", "v"),
                lambda: mlflow.log_metrics({"loss": 1.0}, step=4),
            ):
                with self.assertRaises(MlflowException) as raised:
                    call()
                self.assertIn("was stopped by rule", str(raised.exception))
            mlflow.end_run()
        self.assertEqual(self.run_row("stopped-early").run_id, run.info.run_id)
        self.assertEqual(self.run_row("stopped-early").status, "stopped")

    # --- Retries are harmless ---------------------------------------------------------------

    def test_a_retried_post_records_nothing_twice(self) -> None:
        proxy = FlakyProxy(self.live_server_url, fail_first={"/runs/log-metric", "/runs/log-batch"})
        with proxy, self.tracking(self.key, uri=f"{proxy.url}/mlflow"):
            mlflow.set_experiment("x")
            with mlflow.start_run(run_name="retried"):
                mlflow.log_metric("loss", 1.5, step=1)
                mlflow.log_metrics({"loss": 1.4, "acc": 0.5}, step=2)
                mlflow.log_metric("loss", 1.3, step=3)
        # Each POST reached the server twice: once before the 503, once as the client's retry.
        self.assertEqual(proxy.forwarded["/runs/log-metric"], 3)
        self.assertEqual(proxy.forwarded["/runs/log-batch"], 2)
        points = MetricPoint.objects.filter(run=self.run_row("retried"))
        self.assertEqual(
            sorted(points.values_list("key__name", "step")),
            [("acc", 2), ("loss", 1), ("loss", 2), ("loss", 3)],
        )

    def test_a_retried_runs_create_is_not_replayed(self) -> None:
        # MLflow's client (3.18 on) resends a create only after a 408 or 429, the answers that
        # say the request was not processed; a proxy that gave up on the upstream after
        # forwarding it answers 408 all the same.
        proxy = FlakyProxy(
            self.live_server_url, fail_first={"/runs/create", "/logged-models"}, status=408
        )
        with proxy, self.tracking(self.key, uri=f"{proxy.url}/mlflow"):
            experiment = mlflow.set_experiment("x")
            with mlflow.start_run() as active:  # no run name: the server makes up the id
                mlflow.log_metric("loss", 1.0)
                MlflowClient().create_logged_model(
                    experiment_id=experiment.experiment_id, source_run_id=active.info.run_id
                )
        self.assertEqual(proxy.forwarded["/runs/create"], 2)
        self.assertEqual(proxy.forwarded["/logged-models"], 2)
        # As on MLflow's own server: without a request id a create that reached the server
        # before the 503 is a run of its own (nothing logs into it); the loop logs into the
        # run its retry created.
        runs = Run.objects.filter(campaign=self.campaign)
        self.assertEqual(runs.count(), 2)
        logged = runs.get(run_id=active.info.run_id)
        self.assertEqual(logged.metrics.count(), 1)
        self.assertEqual(LoggedModel.objects.filter(campaign=self.campaign).count(), 2)

    # --- Tenancy, refusals ------------------------------------------------------------------

    def test_a_key_of_another_campaign_sees_nothing(self) -> None:
        other_team = Team.objects.create(name="vision")
        other = make_plannable(other_team, title="LoRA vs full")
        commit_plan(campaign=other, acting_user=make_user("victor", team=other_team, role="owner"))
        _k, other_key = issue_ingest_key(campaign=other, item=other.items.get(name="baseline"))
        with self.tracking(self.key):
            mlflow.set_experiment("x")
            with mlflow.start_run(run_name="ours") as active:
                mlflow.log_metric("loss", 1.0)
        ours = active.info.run_id
        with self.tracking(other_key):
            client = MlflowClient()
            for call in (
                lambda: client.get_run(ours),
                lambda: client.log_metric(ours, "loss", 9.0),
                lambda: client.get_experiment(str(self.campaign.pk)),
                lambda: client.set_terminated(ours, "FAILED"),
                lambda: client.delete_run(ours),
            ):
                with self.assertRaises(MlflowException) as raised:
                    call()
                self.assertEqual(raised.exception.error_code, "RESOURCE_DOES_NOT_EXIST")
            # Its own "experiment" is its own campaign, whatever the name.
            self.assertEqual(
                client.get_experiment_by_name("LoRA vs full").experiment_id, str(other.pk)
            )
        run = self.run_row("ours")
        self.assertEqual(run.metrics.count(), 1)
        self.assertEqual(run.status, "completed")

    def test_without_an_item_the_run_is_refused_telling_how_to_bind_one(self) -> None:
        _k, unbound = issue_ingest_key(campaign=self.campaign)
        with self.tracking(unbound):
            mlflow.set_experiment("x")
            with self.assertRaises(MlflowException) as raised:
                mlflow.start_run(run_name="no-item")
        self.assertEqual(raised.exception.error_code, "INVALID_PARAMETER_VALUE")
        self.assertIn("desk.variant", str(raised.exception))
        self.assertIn(f"issue_ingest_key {self.campaign.pk} --item", str(raised.exception))
        self.assertFalse(Run.objects.filter(run_name="no-item").exists())

    def test_a_draft_or_closed_campaign_refuses_runs(self) -> None:
        draft = make_plannable(self.team, title="draft")
        _k, key = issue_ingest_key(campaign=draft, item=draft.items.get(name="baseline"))
        with self.tracking(key):
            mlflow.set_experiment("x")
            with self.assertRaises(MlflowException) as raised:
                mlflow.start_run(run_name="too-early")
        self.assertEqual(raised.exception.error_code, "INVALID_PARAMETER_VALUE")
        self.assertIn("commit the plan", str(raised.exception))
        Campaign.objects.filter(pk=self.campaign.pk).update(status="closed")
        with self.tracking(self.key):
            with self.assertRaises(MlflowException) as raised:
                mlflow.set_experiment("x")  # a closed campaign takes no new experiment
            self.assertIn("closed", str(raised.exception))
            with self.assertRaises(MlflowException) as raised:
                mlflow.start_run(run_name="too-late")  # nor runs in its default experiment
        self.assertIn("closed", str(raised.exception))
        self.assertFalse(Run.objects.filter(run_name__in=["too-early", "too-late"]).exists())

    def test_relogging_a_param_with_another_value_is_refused(self) -> None:
        with self.tracking(self.key):
            mlflow.set_experiment("x")
            with mlflow.start_run(run_name="params") as active:
                mlflow.log_param("lr", "2e-4")
                mlflow.log_param("lr", "2e-4")  # the same value again is fine
                with self.assertRaises(MlflowException) as raised:
                    mlflow.log_param("lr", "1e-4")
                # A batch is all or nothing: its metrics and tags go with the refused param.
                with self.assertRaises(MlflowException):
                    MlflowClient().log_batch(
                        active.info.run_id,
                        metrics=[Metric("loss", 1.0, 0, 1)],
                        params=[Param("lr", "3e-4")],
                        tags=[RunTag("t", "v")],
                    )
        self.assertEqual(raised.exception.error_code, "INVALID_PARAMETER_VALUE")
        self.assertIn("a new configuration needs a new run", str(raised.exception))
        run = self.run_row("params")
        self.assertEqual(run.config, {"lr": "2e-4"})
        self.assertEqual(run.metrics.count(), 0)
        self.assertNotIn("t", run.tags)

    def test_a_users_own_token_names_the_campaign_by_title(self) -> None:

        token = issue_api_token(owner=self.owner)[1]
        with self.tracking(token):
            self.assertEqual(
                mlflow.set_experiment("LoRA vs full").experiment_id, str(self.campaign.pk)
            )
            with mlflow.start_run(run_name="by-user", tags={"desk.variant": "baseline"}):
                mlflow.log_metric("loss", 1.0)
            with self.assertRaises(MlflowException) as raised:
                MlflowClient().get_experiment_by_name(
                    "no such campaign"
                ) or MlflowClient().create_experiment("no such campaign")
        self.assertEqual(raised.exception.error_code, "RESOURCE_DOES_NOT_EXIST")
        self.assertEqual(self.run_row("by-user").metrics.count(), 1)

    @override_settings(ARTIFACT_MAX_BYTES=64)
    def test_an_artifact_over_the_cap_is_refused_and_not_kept(self) -> None:
        with self.tracking(self.key):
            mlflow.set_experiment("x")
            with mlflow.start_run(run_name="big-file"):
                mlflow.log_text("small", "ok.txt")
                # The artifact client raises requests' HTTPError, not MlflowException.
                with self.assertRaises(requests.HTTPError) as raised:
                    mlflow.log_text("x" * 65, "big.txt")
        self.assertIn("413", str(raised.exception))
        self.assertIn("ARTIFACT_MAX_BYTES", str(raised.exception))
        self.assertEqual(
            list(
                RunArtifact.objects.filter(run__run_name="big-file").values_list("path", flat=True)
            ),
            ["ok.txt"],
        )

    # --- Autolog-style calls ----------------------------------------------------------------

    def test_autolog_style_calls_answer_in_shape_and_keep_the_datasets(self) -> None:
        with self.tracking(self.key):
            client = MlflowClient()
            mlflow.set_experiment("x")
            with mlflow.start_run(run_name="autolog") as active:
                run_id = active.info.run_id
                dataset = Dataset(name="train", digest="abc", source_type="code", source="{}")
                client.log_inputs(
                    run_id,
                    datasets=[DatasetInput(dataset, [InputTag("mlflow.data.context", "train")])],
                )
                model = client.create_logged_model(
                    experiment_id=active.info.experiment_id,
                    name="model",
                    source_run_id=run_id,
                    params={"max_depth": "3"},
                    tags={"flavor": "sklearn"},
                )
                self.assertTrue(model.model_id.startswith("m-"))
                self.assertEqual(model.source_run_id, run_id)
                self.assertTrue(model.artifact_location.startswith("mlflow-artifacts:/"))
                client.set_logged_model_tags(model.model_id, {"stage": "pilot"})
                client.log_model_artifact(model.model_id, self._file("MLmodel", b"flavors: {}\n"))
                ready = client.finalize_logged_model(model.model_id, LoggedModelStatus.READY)
                self.assertEqual(ready.status, LoggedModelStatus.READY)
                fetched = client.get_logged_model(model.model_id)
                self.assertEqual(fetched.params, {"max_depth": "3"})
                self.assertEqual(fetched.tags["stage"], "pilot")
                client.log_outputs(run_id, [LoggedModelOutput(model.model_id, step=0)])
                mlflow.log_metric("loss", 0.5, step=1)
                mlflow.log_metric("loss", 0.4, step=2)
                history = client.get_metric_history(run_id, "loss")
        self.assertEqual([(m.step, m.value) for m in history], [(1, 0.5), (2, 0.4)])
        self.assertEqual([i["dataset"]["name"] for i in self.run_row("autolog").inputs], ["train"])
        stored = LoggedModel.objects.get(model_id=model.model_id)
        self.assertEqual(stored.status, "LOGGED_MODEL_READY")
        self.assertTrue(
            RunArtifact.objects.filter(
                run__run_name="autolog", path=f"models/{model.model_id}/MLmodel"
            ).exists()
        )

    def _file(self, name: str, content: bytes) -> str:
        folder = tempfile.mkdtemp()
        path = os.path.join(folder, name)
        with open(path, "wb") as f:
            f.write(content)
        self.addCleanup(shutil.rmtree, folder, ignore_errors=True)
        return path


class FlakyProxy:
    """Forwards to the live server; the first request to each path in `fail_first` is
    forwarded (its effect happens) but answered `status` (503 by default), as a proxy timing
    out would, so the MLflow client sends the same POST again."""

    def __init__(self, target: str, fail_first: set[str], status: int = 503) -> None:
        self.target = urlparse(target)
        self.status = status
        self.fail_first = set(fail_first)
        self.forwarded: dict[str, int] = {p: 0 for p in fail_first}
        self.lock = threading.Lock()
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _forward(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else None
                conn = http.client.HTTPConnection(proxy.target.hostname, proxy.target.port)
                headers = {k: v for k, v in self.headers.items() if k.lower() != "host"}
                conn.request(self.command, self.path, body=body, headers=headers)
                answer = conn.getresponse()
                data = answer.read()
                fail = False
                with proxy.lock:
                    for suffix in proxy.forwarded:
                        if self.path.split("?")[0].endswith(suffix):
                            proxy.forwarded[suffix] += 1
                            if suffix in proxy.fail_first:
                                proxy.fail_first.discard(suffix)
                                fail = True
                if fail:
                    data, status, ctype = (
                        b'{"error_code":"TEMPORARILY_UNAVAILABLE"}',
                        proxy.status,
                        "application/json",
                    )
                else:
                    status, ctype = answer.status, answer.getheader("Content-Type") or ""
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_PUT = do_PATCH = _forward

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self) -> FlakyProxy:
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.shutdown()
        self.server.server_close()
