"""MLflow's semantics a training loop depends on (issue 34), with the real client against a live
server: late data on a finished run, reopening it, empty files, experiment tags, downloading
".", a model logged outside a run, negative steps (docs/mlflow.md, docs/domain.md §5.9)."""

from __future__ import annotations

import os
import posixpath
import tempfile
from pathlib import Path
from typing import Any

import mlflow
from mlflow import MlflowClient
from mlflow.exceptions import MlflowException

from campaigns.models import Campaign, MetricPoint, Run, RunArtifact
from mlflow_api.models import LoggedModel, LoggedModelArtifact
from mlflow_api.tests.live import MlflowLiveCase


class Echo(mlflow.pyfunc.PythonModel):  # type: ignore[misc]
    def predict(self, context: Any, model_input: Any, params: Any = None) -> Any:
        return model_input


class LateDataAndReopening(MlflowLiveCase):
    def test_logging_to_a_finished_run_is_kept_as_late_data_its_status_and_hours_unchanged(
        self,
    ) -> None:
        with self.tracking(self.key):
            with mlflow.start_run(run_name="fit") as active:
                mlflow.log_metric("train_loss", 1.0, step=1)
            run_id = active.info.run_id
            finished = Run.objects.get(run_id=run_id)
            client = MlflowClient()
            # What Lightning's trainer.test() after fit() does: log to the FINISHED run.
            client.log_metric(run_id, "test_loss", 0.5, step=1)
            client.log_param(run_id, "test_batches", "4")
            client.set_tag(run_id, "phase", "test")
            fetched = client.get_run(run_id)
        run = Run.objects.get(run_id=run_id)
        self.assertEqual((run.status, run.observed_hours), ("completed", finished.observed_hours))
        self.assertEqual(run.finished_at, finished.finished_at)
        self.assertIsNotNone(run.late_data_at)
        self.assertEqual(fetched.info.status, "FINISHED")
        self.assertEqual(fetched.data.metrics["test_loss"], 0.5)
        self.assertEqual(
            (fetched.data.params["test_batches"], fetched.data.tags["phase"]), ("4", "test")
        )

    def test_a_closed_campaign_still_refuses_late_data(self) -> None:
        with self.tracking(self.key):
            with mlflow.start_run(run_name="fit") as active:
                mlflow.log_metric("loss", 1.0, step=1)
            Campaign.objects.filter(pk=self.campaign.pk).update(status="closed")
            with self.assertRaises(MlflowException) as raised:
                MlflowClient().log_metric(active.info.run_id, "test_loss", 0.5)
        self.assertEqual(raised.exception.error_code, "INVALID_STATE")
        self.assertFalse(MetricPoint.objects.filter(key__name="test_loss").exists())

    def test_a_stopped_run_still_answers_with_its_stop_and_does_not_reopen(self) -> None:
        with self.tracking(self.key):
            with self.assertRaises(MlflowException), mlflow.start_run(run_name="nan") as active:
                mlflow.log_metric("loss", float("nan"), step=1)
                mlflow.log_metric("loss", 1.0, step=2)
            client = MlflowClient()
            for call in (
                lambda: client.log_metric(active.info.run_id, "test_loss", 0.5),
                lambda: client.update_run(active.info.run_id, status="RUNNING"),
            ):
                with self.assertRaises(MlflowException) as raised:
                    call()
                self.assertIn(f"rule #{self.nan_rule.pk}", str(raised.exception))
        self.assertEqual(Run.objects.get(run_id=active.info.run_id).status, "stopped")

    def test_a_finished_run_reopens_and_finishes_again(self) -> None:
        with self.tracking(self.key):
            with mlflow.start_run(run_name="twice") as active:
                mlflow.log_metric("loss", 1.0, step=1)
            with mlflow.start_run(run_id=active.info.run_id):
                self.assertEqual(Run.objects.get(run_id=active.info.run_id).status, "running")
                mlflow.log_metric("loss", 0.5, step=2)
        run = Run.objects.get(run_id=active.info.run_id)
        self.assertEqual(
            (run.status, run.segments.count(), run.late_data_at), ("completed", 1, None)
        )

    def test_a_negative_step_is_stored(self) -> None:
        with self.tracking(self.key):
            with mlflow.start_run(run_name="warmup") as active:
                mlflow.log_metric("lr", 0.1, step=-5)
                mlflow.log_metric("lr", 0.2, step=-(2**62))
            history = MlflowClient().get_metric_history(active.info.run_id, "lr")
        self.assertEqual(sorted(m.step for m in history), [-(2**62), -5])


class FilesAndExperiments(MlflowLiveCase):
    def test_log_artifacts_of_a_directory_with_an_empty_file_and_download_dot(self) -> None:
        folder = Path(tempfile.mkdtemp(prefix="cd-empty-"))
        (folder / "empty.txt").write_bytes(b"")
        (folder / "sub").mkdir()
        (folder / "sub" / "notes.txt").write_text("x")
        out = tempfile.mkdtemp(prefix="cd-download-")
        with self.tracking(self.key):
            with mlflow.start_run(run_name="files") as active:
                mlflow.log_artifacts(str(folder))
                mlflow.log_text("after", "after.txt")  # the connection is still usable
            client = MlflowClient()
            listed = {
                posixpath.normpath(f.path)
                for f in client.list_artifacts(active.info.run_id, "sub/..")
            }
            got = mlflow.artifacts.download_artifacts(
                run_id=active.info.run_id, artifact_path=".", dst_path=out
            )
        stored = dict(
            RunArtifact.objects.filter(run__run_id=active.info.run_id).values_list(
                "path", "size_bytes"
            )
        )
        self.assertEqual(stored, {"empty.txt": 0, "sub/notes.txt": 1, "after.txt": 5})
        self.assertEqual(listed, {"empty.txt", "sub", "after.txt"})
        self.assertEqual(os.path.getsize(os.path.join(got, "empty.txt")), 0)
        self.assertEqual(Path(got, "sub", "notes.txt").read_text(), "x")

    def test_experiment_tags_on_the_campaign_and_on_a_named_experiment(self) -> None:
        with self.tracking(self.key):
            client = MlflowClient()
            default = str(self.campaign.pk)
            client.set_experiment_tag(default, "dataset", "imagenet")
            sweep = mlflow.set_experiment("lora-sweep")
            mlflow.set_experiment_tag("owner", "olga")
            client.set_experiment_tag(sweep.experiment_id, "owner", "nina")  # replaced
            self.assertEqual(client.get_experiment(default).tags["dataset"], "imagenet")
            self.assertEqual(client.get_experiment(sweep.experiment_id).tags, {"owner": "nina"})
            self.assertEqual(
                {e.name for e in client.search_experiments()}, {"LoRA vs full", "lora-sweep"}
            )
            with mlflow.start_run(run_name="in-sweep") as active:
                mlflow.log_metric("loss", 1.0)
            found = client.search_runs([sweep.experiment_id])
            self.assertEqual([r.info.run_id for r in found], [active.info.run_id])
            self.assertEqual(client.search_runs([default]), [])
        run = Run.objects.get(run_id=active.info.run_id)
        self.assertEqual(run.campaign_id, self.campaign.pk)  # the campaign stays the boundary

    def test_log_model_outside_a_run_keeps_its_files_and_loads(self) -> None:
        with self.tracking(self.key):
            info = mlflow.pyfunc.log_model(name="echo", python_model=Echo())
            loaded = mlflow.pyfunc.load_model(info.model_uri)
            self.assertIsNone(mlflow.active_run())
        model = LoggedModel.objects.get(model_id=info.model_id)
        self.assertIsNone(model.source_run)
        self.assertEqual(model.status, "LOGGED_MODEL_READY")
        self.assertTrue(LoggedModelArtifact.objects.filter(model=model, path="MLmodel").exists())
        self.assertEqual(list(loaded.predict([1, 2])), [1, 2])
