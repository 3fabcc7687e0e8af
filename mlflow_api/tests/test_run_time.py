"""MLflow runs measure their time and their pilots inform the forecast (docs/mlflow.md,
docs/domain.md §5.8, §10.7), with MLflow's own client against a live server: a `start_run()`
context records its hours from the client's start_time to its end_time, metric timestamps are
heartbeats, and a pilot logged by the Hugging Face Trainer or Lightning's ThroughputMonitor,
unchanged, gives its item a measured forecast (`time_source: "pilot"`).

The training libraries need the `integrations` extra (skipped, visibly, without it)."""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

import mlflow
from django.test import override_settings

from campaigns.models import Campaign, PlannedItem, Run, Team, ThroughputSample
from campaigns.services.keys import issue_ingest_key
from campaigns.services.plans import commit_plan
from campaigns.tests.factories import as_user, celery_eager, make_plannable, make_user
from mlflow_api.tests import test_integrations
from mlflow_api.tests.live import MlflowLiveCase
from tests.test_client_clock import hundredths

# The training libraries: the integrations extra, PostgreSQL (they log from threads of their
# own, after a test's transaction), skipped visibly without either.
needs_libraries = test_integrations.pytestmark


class StartRunContext(MlflowLiveCase):
    def setUp(self) -> None:
        super().setUp()
        # An hourly campaign: a run costs its GPU-hours × 36.00 USD.
        Campaign.objects.filter(pk=self.campaign.pk).update(hourly_rate_per_gpu=Decimal("36.00"))

    def test_a_start_run_context_records_hours_within_two_seconds_and_a_cost(self) -> None:
        with self.tracking(self.key):
            began = time.time()
            with mlflow.start_run(run_name="timed") as active:
                # 19 s: past the 18 s that half-up rounding makes 0.01 h.
                for step in range(19):
                    mlflow.log_metric("loss", 2.0 - step / 100, step=step)
                    time.sleep(1)
            wall = time.time() - began
        run = Run.objects.get(run_id=active.info.run_id)
        assert run.ended_at is not None
        took = (run.ended_at - run.started_at).total_seconds()
        self.assertLess(abs(took - wall), 2)
        self.assertEqual(run.status, "completed")
        self.assertEqual(run.measured_hours, hundredths(took))
        self.assertEqual(run.observed_hours, Decimal("0.01"))
        detail = as_user(self.owner).get(f"/api/v1/runs/{run.run_id}/").json()
        self.assertEqual(detail["cost_so_far"]["amount"], "0.36")  # 0.01 h × 1 GPU × 36.00
        info = mlflow.MlflowClient(
            tracking_uri=f"{self.live_server_url}/mlflow"
        )  # the times MLflow shows are the run's own
        with self.tracking(self.key):
            shown = info.get_run(run.run_id).info
        self.assertEqual(shown.start_time, int(run.started_at.timestamp() * 1000))
        self.assertEqual(shown.end_time, int(run.ended_at.timestamp() * 1000))

    def test_a_metrics_timestamp_is_the_runs_heartbeat(self) -> None:
        with self.tracking(self.key), mlflow.start_run(run_name="beats") as active:
            time.sleep(1.5)
            stamp = int(time.time() * 1000) - 500  # after the start, before the server's now
            mlflow.log_metric("loss", 1.0, step=1, timestamp=stamp)
            run = Run.objects.get(run_id=active.info.run_id)
            self.assertEqual(run.heartbeat_at, datetime.fromtimestamp(stamp / 1000, tz=UTC))
            # A timestamp from the future is taken as the server's now, no later.
            mlflow.log_metric("loss", 0.9, step=2, timestamp=stamp + 3_600_000)
            run.refresh_from_db()
            assert run.heartbeat_at is not None
            self.assertLess(run.heartbeat_at.timestamp() * 1000, stamp + 60_000)

    def test_the_desk_gpus_tag_sets_the_gpus_the_run_is_costed_on(self) -> None:
        with self.tracking(self.key):
            with mlflow.start_run(run_name="two", tags={"desk.gpus": "2"}) as active:
                pass
            with self.assertRaises(mlflow.exceptions.MlflowException) as caught:
                mlflow.start_run(run_name="none", tags={"desk.gpus": "0"})
        self.assertEqual(Run.objects.get(run_id=active.info.run_id).gpus, 2)
        self.assertIn("desk.gpus", str(caught.exception))

    def test_a_start_time_before_the_plans_commit_is_kept_for_mlflow_and_clocked_from_it(
        self,
    ) -> None:
        client = mlflow.MlflowClient(tracking_uri=f"{self.live_server_url}/mlflow")
        with self.tracking(self.key):
            created = client.create_run(str(self.campaign.pk), start_time=1_000_000)
            self.assertEqual(client.get_run(created.info.run_id).info.start_time, 1_000_000)
        run = Run.objects.get(run_id=created.info.run_id)
        self.campaign.refresh_from_db()
        # MLflow answers the start as sent; the run's clock starts at the plan's commit.
        self.assertEqual(run.started_at, self.campaign.committed_at)

    def test_a_start_time_far_ahead_of_the_server_is_refused_naming_it(self) -> None:
        client = mlflow.MlflowClient(tracking_uri=f"{self.live_server_url}/mlflow")
        ahead = int((time.time() + 3600) * 1000)
        with (
            self.tracking(self.key),
            self.assertRaises(mlflow.exceptions.MlflowException) as caught,
        ):
            client.create_run(str(self.campaign.pk), start_time=ahead)
        self.assertIn("start_time", str(caught.exception))
        self.assertFalse(Run.objects.filter(campaign=self.campaign).exists())


class PilotCase(MlflowLiveCase):
    """A committed campaign whose baseline states its work (a million tokens, 10,000 samples),
    and an ingest key bound to it for pilots: the Trainer's or Lightning's defaults need
    nothing else."""

    def setUp(self) -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        media = tempfile.mkdtemp(prefix="cd-pilot-media-")
        self.out = tempfile.mkdtemp(prefix="cd-pilot-")
        for folder in (media, self.out):
            self.addCleanup(shutil.rmtree, folder, ignore_errors=True)
        self.enterContext(override_settings(MEDIA_ROOT=media))
        self.enterContext(celery_eager())
        self.team = Team.objects.create(name="nlp")
        self.owner = make_user("olga", team=self.team, role="owner")
        self.campaign = make_plannable(self.team, title="pilots")
        self.baseline = PlannedItem.objects.get(campaign=self.campaign, name="baseline")
        PlannedItem.objects.filter(pk=self.baseline.pk).update(tokens=1_000_000, samples=10_000)
        commit_plan(campaign=self.campaign, acting_user=self.owner)
        _key, self.key = issue_ingest_key(
            campaign=self.campaign, acting_user=self.owner, item=self.baseline, kind="pilot"
        )

    def forecast_of_baseline(self) -> dict[str, Any]:
        answer = as_user(self.owner).get(f"/api/v1/campaigns/{self.campaign.pk}/forecast/")
        self.assertEqual(answer.status_code, 200, answer.content)
        body = answer.json()
        [item] = [i for i in body["items"] if i["id"] == self.baseline.pk]
        return {"campaign": body["time_source"], **item}


class HuggingFacePilot(PilotCase):
    pytestmark = needs_libraries

    def test_a_trainer_pilot_through_mlflow_gives_its_item_a_measured_forecast(self) -> None:
        before = self.forecast_of_baseline()
        self.assertNotEqual(before["time_source"], "pilot")
        with self.tracking(self.key):  # the Trainer's defaults, MLflow's default experiment
            trainer = test_integrations._hf_trainer(
                self.out, 8, [], include_num_input_tokens_seen=True
            )
            trainer.train()
        run = Run.objects.get(campaign=self.campaign)
        self.assertEqual((run.kind, run.status), ("pilot", "completed"))
        sample = ThroughputSample.objects.get(run=run)
        logged = {s.name: s.last_value for s in run.metric_summaries.all()}
        self.assertEqual(sample.tokens_per_second, logged["train_tokens_per_second"])
        self.assertEqual(sample.samples_per_second, logged["train_samples_per_second"])
        self.assertEqual(sample.measured_seconds, logged["train_runtime"])
        after = self.forecast_of_baseline()
        self.assertEqual((after["time_source"], after["campaign"]), ("pilot", "pilot"))
        # A million tokens at the measured rate, on the pilot's one GPU.
        expected = 1_000_000 / sample.tokens_per_second / 3600
        self.assertAlmostEqual(after["forecast_hours"], expected, delta=max(0.01, expected * 0.01))


class LightningPilot(PilotCase):
    pytestmark = needs_libraries

    def test_a_throughput_monitor_pilot_gives_its_item_a_measured_forecast(self) -> None:
        import lightning as L
        import torch
        from lightning.pytorch.callbacks import ThroughputMonitor
        from lightning.pytorch.loggers import MLFlowLogger

        class Tiny(L.LightningModule):
            def __init__(self) -> None:
                super().__init__()
                self.net = torch.nn.Linear(4, 1)

            def training_step(self, batch: Any, idx: int) -> Any:
                x, y = batch
                loss = torch.nn.functional.mse_loss(self.net(x), y)
                self.log("train_loss", loss)
                return loss

            def configure_optimizers(self) -> Any:
                return torch.optim.SGD(self.parameters(), lr=0.01)

        torch.manual_seed(0)
        x = torch.randn(128, 4)
        data = torch.utils.data.DataLoader(
            torch.utils.data.TensorDataset(x, x.sum(1, keepdim=True)), batch_size=8
        )
        monitor = ThroughputMonitor(batch_size_fn=lambda batch: batch[0].size(0), window_size=2)
        with self.tracking(self.key):
            logger = MLFlowLogger(
                experiment_name="lightning", tracking_uri=os.environ["MLFLOW_TRACKING_URI"]
            )
            L.Trainer(
                max_steps=12,
                logger=logger,
                callbacks=[monitor],
                log_every_n_steps=1,
                default_root_dir=self.out,
                enable_progress_bar=False,
                enable_checkpointing=False,
                accelerator="cpu",
            ).fit(Tiny(), data)
        run = Run.objects.get(campaign=self.campaign)
        sample = ThroughputSample.objects.get(run=run)
        logged = run.metric_summaries.get(name="train/device/samples_per_sec").last_value
        self.assertEqual((sample.samples_per_second, sample.gpus), (logged, 1))
        self.assertEqual(self.forecast_of_baseline()["time_source"], "pilot")
