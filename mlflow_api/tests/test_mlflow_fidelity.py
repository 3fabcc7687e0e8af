"""The MLflow calls of issue 20, with the real client against a live server: the default
experiment, creates that are never merged, points stored once whatever re-sends them, client
timestamps, run names apart from ids, resume, search, delete, MLflow's limits, the registry."""

from __future__ import annotations

import math
import time
import unittest
from decimal import Decimal

import mlflow
from django.db import connection
from django.db.models import Sum
from mlflow import MlflowClient
from mlflow.entities import Metric, Param, ViewType
from mlflow.exceptions import MlflowException
from mlflow.utils.search_utils import SearchUtils

from campaigns.models import MetricBlock, MetricPoint, Run, RunSegment
from campaigns.services import metric_packing
from campaigns.services.keys import issue_api_token
from campaigns.tests.factories import as_key
from mlflow_api.models import LoggedModel
from mlflow_api.tests.live import MlflowLiveCase


class MlflowFidelity(MlflowLiveCase):
    def test_the_default_experiment_is_the_keys_campaign(self) -> None:
        with self.tracking(self.key):  # no set_experiment: MLflow sends experiment id "0"
            with mlflow.start_run() as active:
                mlflow.log_metric("loss", 1.0, step=1)
            self.assertEqual(active.info.experiment_id, str(self.campaign.pk))
        token = issue_api_token(owner=self.owner)[1]
        with self.tracking(token), self.assertRaises(MlflowException) as raised:
            MlflowClient().create_run("0")
        self.assertIn("MLFLOW_EXPERIMENT_NAME", str(raised.exception))

    def test_identical_creates_are_distinct_runs_with_their_own_params(self) -> None:
        """GridSearchCV's four child runs send four identical runs/create bodies."""
        with self.tracking(self.key):
            client = MlflowClient()
            exp = str(self.campaign.pk)
            children = [client.create_run(exp, run_name="child") for _ in range(4)]
            for i, child in enumerate(children):
                client.log_batch(child.info.run_id, params=[Param("C", str(i))])
        ids = {c.info.run_id for c in children}
        self.assertEqual(len(ids), 4)
        configs = sorted(Run.objects.get(run_id=i).config["C"] for i in ids)
        self.assertEqual(configs, ["0", "1", "2", "3"])

    def test_two_logged_models_keep_two_models_and_no_point_twice(self) -> None:
        with self.tracking(self.key):
            client = MlflowClient()
            with mlflow.start_run(run_name="models") as active:
                run_id = active.info.run_id
                mlflow.log_metric("acc", 0.9, step=0)
                models = []
                for _ in range(3):
                    model = client.create_logged_model(
                        experiment_id=active.info.experiment_id, source_run_id=run_id
                    )
                    models.append(model.model_id)
                    # What log_model does after creating the model (mlflow/models/model.py):
                    # re-send the step's points without a model id, now with this one.
                    history = client.get_metric_history(run_id, "acc")
                    client.log_batch(
                        run_id,
                        metrics=[
                            Metric(m.key, m.value, m.timestamp, m.step, model_id=model.model_id)
                            for m in history
                            if m.model_id is None
                        ],
                    )
                history = client.get_metric_history(run_id, "acc")
        self.assertEqual(len(set(models)), 3)
        self.assertEqual(LoggedModel.objects.filter(source_run__run_id=run_id).count(), 3)
        self.assertEqual(MetricPoint.objects.filter(run__run_id=run_id).count(), 1)
        self.assertEqual([m.model_id for m in history], [models[0]])

    @unittest.skipUnless(connection.vendor == "postgresql", "only PostgreSQL packs points")
    def test_points_packed_before_log_model_re_sends_them_are_linked_not_stored_again(
        self,
    ) -> None:
        """log_model re-sends the step's points with the model id at the end of training,
        long after the beat packed them (docs/metric_store.md §3 "Two tiers")."""
        with self.tracking(self.key):
            client = MlflowClient()
            with mlflow.start_run(run_name="packed") as active:
                run_id = active.info.run_id
                sent = [Metric("acc", i / 100, 1_700_000_000_000 + i, i) for i in range(100)]
                client.log_batch(run_id, metrics=sent)
                metric_packing.pack_points(run_id=Run.objects.get(run_id=run_id).pk)
                client.log_batch(run_id, metrics=sent[-10:])  # a retry of a packed batch
                model = client.create_logged_model(
                    experiment_id=active.info.experiment_id, source_run_id=run_id
                )
                history = client.get_metric_history(run_id, "acc")
                client.log_batch(
                    run_id,
                    metrics=[
                        Metric(m.key, m.value, m.timestamp, m.step, model_id=model.model_id)
                        for m in history
                        if m.step == 0 and m.model_id is None
                    ],
                )
                history = client.get_metric_history(run_id, "acc")
        packed = MetricBlock.objects.filter(run__run_id=run_id).aggregate(n=Sum("count"))["n"]
        self.assertEqual((packed, MetricPoint.objects.filter(run__run_id=run_id).count()), (100, 0))
        self.assertEqual([m.step for m in history], list(range(100)))
        self.assertEqual([m.model_id for m in history[:2]], [model.model_id, None])

    def test_client_timestamps_round_trip_and_retries_store_once(self) -> None:
        stamps = [1_700_000_000_000 + 1000 * i for i in range(50)]
        with self.tracking(self.key):
            client = MlflowClient()
            with mlflow.start_run(run_name="stamps") as active:
                run_id = active.info.run_id
                for i, stamp in enumerate(stamps):
                    client.log_metric(run_id, "loss", 1.0 / (i + 1), timestamp=stamp, step=i)
                # A retried batch (same points) is stored once; another value at a step is kept.
                again = [Metric("loss", 1.0, stamps[0], 0), Metric("loss", 7.0, stamps[0], 0)]
                client.log_batch(run_id, metrics=again)
                history = client.get_metric_history(run_id, "loss")
                fetched = client.get_run(run_id)
        self.assertEqual([m.timestamp for m in history if m.value != 7.0], stamps)
        self.assertEqual(len(history), 51)
        self.assertEqual(fetched.data.metrics["loss"], 1.0 / 50)
        series = as_key(self.key).get(f"/api/v1/runs/{run_id}/metrics/?name=loss").json()
        at_step = {p["step"]: p for p in series["points"] if p["value"] != 7.0}
        self.assertEqual(at_step[1]["timestamp"], stamps[1])
        detail = as_key(self.key).get(f"/api/v1/runs/{run_id}/").json()
        self.assertEqual(detail["tags"]["mlflow.runName"], "stamps")
        self.assertEqual(detail["run_name"], "stamps")

    def test_names_are_display_text_and_a_rerun_is_a_new_run(self) -> None:
        with self.tracking(self.key):
            client = MlflowClient()
            ids = []
            for _ in range(2):
                with mlflow.start_run(run_name="my run/2") as active:
                    mlflow.log_metric("loss", 1.0)
                ids.append(active.info.run_id)
            client.update_run(ids[0], name="renamed: first")
            client.set_terminated(ids[0], "FAILED")  # already finished: answered, unchanged
            self.assertEqual(client.get_run(ids[0]).info.run_name, "renamed: first")
            self.assertEqual(client.get_run(ids[1]).info.run_name, "my run/2")
        self.assertNotEqual(ids[0], ids[1])
        self.assertEqual(Run.objects.get(run_id=ids[0]).status, "completed")

    def test_a_failed_run_resumes_with_its_hours_per_segment(self) -> None:
        with self.tracking(self.key):
            with mlflow.start_run(run_name="resumable") as active:
                run_id = active.info.run_id
                mlflow.log_metric("loss", 2.0, step=1)
            MlflowClient().set_terminated(run_id, "FAILED")
        run = Run.objects.get(run_id=run_id)
        self.assertEqual(run.status, "completed")  # the with-block finished it first
        Run.objects.filter(pk=run.pk).update(status="failed")  # a crashed job, as MLflow says
        with self.tracking(self.key):
            with mlflow.start_run(run_id=run_id):  # MLflow's resume: runs/update RUNNING
                mlflow.log_metric("loss", 1.5, step=2)
            with mlflow.start_run(run_id=run_id):  # a completed run reopens too, as in MLflow
                mlflow.log_metric("loss", 1.2, step=3)
        run.refresh_from_db()
        segments = list(RunSegment.objects.filter(run=run).values_list("number", "status"))
        self.assertEqual(segments, [(1, "failed"), (2, "completed")])
        self.assertEqual(run.status, "completed")
        self.assertEqual(run.observed_hours, run.prior_hours + Decimal("0.00"))
        self.assertEqual(run.metrics.count(), 3)

    def test_a_stopped_run_does_not_resume(self) -> None:
        with self.tracking(self.key):
            with self.assertRaises(MlflowException), mlflow.start_run(run_name="nan") as active:
                mlflow.log_metric("loss", math.nan, step=1)
                mlflow.log_metric("loss", 1.0, step=2)
            with self.assertRaises(MlflowException) as raised:
                MlflowClient().update_run(active.info.run_id, status="RUNNING")
        self.assertIn(f"rule #{self.nan_rule.pk}", str(raised.exception))

    def test_search_runs_answers_as_mlflows_own_search(self) -> None:
        with self.tracking(self.key):
            for i, (lr, opt) in enumerate([("0.01", "adam"), ("0.1", "sgd"), ("0.01", "sgd")]):
                with mlflow.start_run(run_name=f"grid-{i}", tags={"opt": opt}):
                    mlflow.log_params({"lr": lr})
                    mlflow.log_metric("f1 score", 0.5 + i / 10)
                time.sleep(0.01)
            client = MlflowClient()
            exp = [str(self.campaign.pk)]
            every = client.search_runs(exp, max_results=1000)
            for text, order in [
                ("metrics.`f1 score` > 0.55", ["metrics.`f1 score` DESC"]),
                ("params.lr = '0.01' and tags.opt LIKE 's%'", []),
                (
                    "attributes.run_name ILIKE 'GRID-%' and attributes.status = 'FINISHED'",
                    ["params.lr"],
                ),
            ]:
                ours = client.search_runs(exp, filter_string=text, order_by=order)
                theirs = SearchUtils.sort(SearchUtils.filter(every, text), order)
                self.assertEqual(
                    [r.info.run_id for r in ours], [r.info.run_id for r in theirs], text
                )
            listed = mlflow.search_runs(
                exp, filter_string="params.lr = '0.1'", output_format="list"
            )
            self.assertEqual([r.info.run_name for r in listed], ["grid-1"])
            first = client.search_runs(exp, max_results=2)
            rest = client.search_runs(exp, max_results=2, page_token=first.token)
            self.assertEqual(len(first) + len(rest), 3)
            client.delete_run(first[0].info.run_id)
            self.assertEqual(len(client.search_runs(exp)), 2)
            deleted = client.search_runs(exp, run_view_type=ViewType.DELETED_ONLY)
            self.assertEqual([r.info.run_id for r in deleted], [first[0].info.run_id])
            client.restore_run(first[0].info.run_id)
            self.assertEqual(len(client.search_runs(exp)), 3)

    def test_mlflows_limits_and_a_deleted_run_refuses_logging(self) -> None:
        with self.tracking(self.key):
            client = MlflowClient()
            with mlflow.start_run(run_name="limits") as active:
                mlflow.log_metric("k" * 250, 1.0, step=-5)
            client.delete_run(active.info.run_id)
            with self.assertRaises(MlflowException) as raised:
                client.log_metric(active.info.run_id, "loss", 1.0)
        self.assertIn("deleted", str(raised.exception))
        point = MetricPoint.objects.get(run__run_id=active.info.run_id)
        self.assertEqual((len(point.name), point.step), (250, -5))

    def test_the_registry_is_refused_saying_where_the_model_is(self) -> None:
        with self.tracking(self.key):
            with mlflow.start_run(run_name="reg") as active:
                model = MlflowClient().create_logged_model(
                    experiment_id=active.info.experiment_id, source_run_id=active.info.run_id
                )
            with self.assertRaises(MlflowException) as raised:
                MlflowClient().create_registered_model("my-model")
        self.assertIn(f"models:/{model.model_id}", str(raised.exception))
