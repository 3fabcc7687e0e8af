"""The MLflow integrations people use, unchanged, against a live server: the Hugging Face
Trainer (report_to=["mlflow"], its defaults) and Lightning's MLFlowLogger(log_model=True), with
campaign_desk_client's stop callbacks ending them at the step a rule fired, a checkpoint saved.

Tiny models built from configs with random weights, synthetic data, CPU, nothing downloaded.
Needs the `integrations` extra (torch, transformers, lightning); skipped, visibly, without it.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import tempfile
from typing import Any
from unittest import mock

import pytest

from campaigns.models import MetricPoint, PlannedItem, Run, StopRule, Team
from campaigns.services.keys import issue_ingest_key
from campaigns.services.plans import commit_plan
from campaigns.tests.factories import make_plannable, make_user
from mlflow_api.tests.live import MlflowLiveCase

MISSING = [
    name
    for name in ("torch", "transformers", "lightning")
    if importlib.util.find_spec(name) is None
]
pytestmark = [
    pytest.mark.integrations,
    # The training libraries log from threads of their own (transformers 5.x and Lightning
    # asynchronously) and go on after a test ends; a SQLite live server shares its in-memory
    # connection with the test, so those late writes landed in the next tests' transactions.
    pytest.mark.postgres,
    pytest.mark.skipif(
        bool(MISSING),
        reason=f"needs the integrations extra (pip install -e '.[integrations]'): {MISSING}",
    ),
]

NAN_AT = 6
POLL = 0.2


class IntegrationCase(MlflowLiveCase):
    grace_steps = 0  # the grad_norm rule's grace (docs/domain.md §4.6)

    def setUp(self) -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        media = tempfile.mkdtemp(prefix="cd-mlflow-media-")
        self.addCleanup(shutil.rmtree, media, ignore_errors=True)
        self.out = tempfile.mkdtemp(prefix="cd-integration-")
        self.addCleanup(shutil.rmtree, self.out, ignore_errors=True)
        from django.test import override_settings

        self.enterContext(override_settings(MEDIA_ROOT=media))
        self.team = Team.objects.create(name="nlp")
        self.owner = make_user("olga", team=self.team, role="owner")
        self.campaign = make_plannable(self.team, title="HF and Lightning")
        # The non-finite rule can watch any metric: HF's NaN filter hides a NaN loss, the
        # NaN stays visible in grad_norm.
        self.grad_rule = StopRule.objects.create(
            campaign=self.campaign,
            kind="non_finite_loss",
            metric="grad_norm",
            grace_steps=self.grace_steps,
        )
        commit_plan(campaign=self.campaign, acting_user=self.owner)
        self.baseline = PlannedItem.objects.get(campaign=self.campaign, name="baseline")
        _key, self.key = issue_ingest_key(
            campaign=self.campaign, acting_user=self.owner, item=self.baseline
        )

    def only_run(self) -> Run:
        return Run.objects.get(campaign=self.campaign)


def _hf_trainer(out: str, max_steps: int, callbacks: list[Any], **arguments: Any) -> Any:
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel, Trainer, TrainingArguments

    torch.manual_seed(0)
    model = GPT2LMHeadModel(
        GPT2Config(n_layer=1, n_head=2, n_embd=32, vocab_size=64, n_positions=16)
    )
    data = [{"input_ids": torch.randint(0, 64, (16,))} for _ in range(64)]
    for row in data:
        row["labels"] = row["input_ids"]
    args = TrainingArguments(
        output_dir=out,
        max_steps=max_steps,
        per_device_train_batch_size=4,
        logging_steps=1,
        save_strategy="no",
        report_to=["mlflow"],
        use_cpu=True,
        disable_tqdm=True,
        **arguments,
    )
    return Trainer(model=model, args=args, train_dataset=data, callbacks=callbacks)


class PoisonAt:
    """Sets a weight to NaN at one step: the loss and grad_norm go NaN from there."""

    def __init__(self, step: int) -> None:
        self.step = step

    def poison(self, model: Any) -> None:
        import torch

        with torch.no_grad():
            next(model.parameters()).fill_(float("nan"))


class HuggingFaceTrainer(IntegrationCase):
    def test_the_trainers_defaults_log_every_point(self) -> None:
        with self.tracking(self.key):  # no experiment set: MLflow's default experiment "0"
            _hf_trainer(self.out, 8, []).train()
        run = self.only_run()
        steps = sorted(
            MetricPoint.objects.filter(run=run, key__name="loss").values_list("step", flat=True)
        )
        self.assertEqual(steps, list(range(1, 9)))
        self.assertEqual(run.status, "completed")

    def test_a_nan_grad_norm_stops_the_trainer_with_a_checkpoint(self) -> None:
        from transformers import TrainerCallback

        from campaign_desk_client.callbacks import DeskTrainerCallback

        poison = PoisonAt(NAN_AT)

        class Poison(TrainerCallback):  # type: ignore[misc]
            def on_step_begin(self, args: Any, state: Any, control: Any, **kw: Any) -> None:
                if state.global_step == poison.step:
                    poison.poison(kw["model"])

        desk = DeskTrainerCallback(every_seconds=POLL)
        with self.tracking(self.key):
            trainer = _hf_trainer(self.out, 200, [Poison(), desk])
            trainer.train()
        run = self.only_run()
        self.assertEqual(run.status, "stopped")
        self.assertEqual(run.stop_rule_id, self.grad_rule.pk)
        stopped_at = trainer.state.global_step
        self.assertLess(stopped_at, 200)
        self.assertGreaterEqual(stopped_at, NAN_AT + 1)
        self.assertTrue(os.path.isdir(os.path.join(self.out, f"checkpoint-{stopped_at}")))
        # HF's logging_nan_inf_filter hides the NaN loss; the rule saw grad_norm.
        self.assertIn("grad_norm is NaN", run.stop_reason)


class LightningLoop(IntegrationCase):
    def _fit(self, callbacks: list[Any], max_steps: int, *, poison_at: int | None = None) -> Any:
        import lightning as L
        import torch
        from lightning.pytorch.loggers import MLFlowLogger

        class Tiny(L.LightningModule):
            def __init__(self) -> None:
                super().__init__()
                self.net = torch.nn.Sequential(
                    torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 1)
                )

            def training_step(self, batch: Any, idx: int) -> Any:
                if poison_at is not None and self.global_step == poison_at:
                    PoisonAt(poison_at).poison(self)
                x, y = batch
                loss = torch.nn.functional.mse_loss(self.net(x), y)
                self.log("train_loss", loss)
                return loss

            def test_step(self, batch: Any, idx: int) -> Any:
                x, y = batch
                self.log("test_loss", torch.nn.functional.mse_loss(self.net(x), y))

            def on_before_optimizer_step(self, optimizer: Any) -> None:
                norms = [p.grad.norm() for p in self.parameters() if p.grad is not None]
                self.log("grad_norm", torch.stack(norms).norm())

            def configure_optimizers(self) -> Any:
                return torch.optim.SGD(self.parameters(), lr=0.01)

        torch.manual_seed(0)
        x = torch.randn(256, 4)
        data = torch.utils.data.DataLoader(
            torch.utils.data.TensorDataset(x, x.sum(1, keepdim=True)), batch_size=8
        )
        logger = MLFlowLogger(
            experiment_name="lightning",
            tracking_uri=os.environ["MLFLOW_TRACKING_URI"],
            log_model=True,
        )
        trainer = L.Trainer(
            max_steps=max_steps,
            logger=logger,
            callbacks=callbacks,
            log_every_n_steps=1,
            default_root_dir=self.out,
            enable_progress_bar=False,
            accelerator="cpu",
        )
        trainer.fit(Tiny(), data)
        self.data = data
        return trainer

    def test_log_model_true_keeps_every_point_and_the_checkpoint(self) -> None:
        with self.tracking(self.key):
            self._fit([], 20)
        run = self.only_run()
        self.assertEqual(MetricPoint.objects.filter(run=run, key__name="train_loss").count(), 20)
        self.assertTrue(run.artifacts.filter(path__endswith=".ckpt").exists())

    def test_test_after_fit_logs_to_the_finished_run_as_late_data(self) -> None:
        """MLFlowLogger ends the run FINISHED after fit(); test() logs to it again (issue 34:
        refused before, which crashed test())."""
        with self.tracking(self.key):
            trainer = self._fit([], 10)
            trainer.test(trainer.lightning_module, dataloaders=self.data)
        run = self.only_run()
        self.assertEqual(run.status, "completed")
        self.assertTrue(MetricPoint.objects.filter(run=run, key__name="test_loss").exists())
        self.assertIsNotNone(run.late_data_at)

    def test_a_nan_grad_norm_stops_fit_with_a_checkpoint(self) -> None:
        from campaign_desk_client.callbacks import DeskLightningCallback

        desk = DeskLightningCallback(every_seconds=0)
        with self.tracking(self.key):
            trainer = self._fit([desk], 200, poison_at=NAN_AT)
        run = self.only_run()
        self.assertEqual((run.status, run.stop_rule_id), ("stopped", self.grad_rule.pk))
        # Checked before each batch: the step after the firing one ends the loop.
        self.assertEqual(trainer.global_step, NAN_AT + 1)
        self.assertTrue(desk.checkpoint_path and os.path.exists(desk.checkpoint_path))


class LightningGrace(IntegrationCase):
    grace_steps = 4
    _fit = LightningLoop._fit

    def test_the_rules_grace_lets_fit_log_on_to_its_last_step_then_save_and_end(self) -> None:
        from campaign_desk_client.callbacks import DeskLightningCallback

        desk = DeskLightningCallback(every_seconds=0)
        with self.tracking(self.key):
            trainer = self._fit([desk], 200, poison_at=NAN_AT)
        run = self.only_run()
        self.assertEqual((run.status, run.stop_rule_id), ("stopped", self.grad_rule.pk))
        self.assertEqual(trainer.global_step, run.stop_step + 4)
        # The synchronous logger's points after the firing step were taken, none past the grace.
        steps = MetricPoint.objects.filter(run=run, key__name="train_loss").values_list(
            "step", flat=True
        )
        self.assertTrue(run.stop_step < max(steps) <= run.stop_step + 4)
        self.assertTrue(desk.checkpoint_path and os.path.exists(desk.checkpoint_path))


def test_callbacks_module_imports_without_the_libraries() -> None:
    with mock.patch.dict("sys.modules", {"transformers": None, "lightning": None}):
        import campaign_desk_client.callbacks as callbacks

        watch = callbacks.StopWatch(run_id="r", every_seconds=5)
        assert watch.grace_steps is None  # the rule states the grace


@pytest.mark.skipif(
    importlib.util.find_spec("sklearn") is None or importlib.util.find_spec("pandas") is None,
    reason="needs the integrations extra (scikit-learn, pandas)",
)
# Autolog logs GridSearchCV's child runs from a thread pool: concurrent requests (PostgreSQL
# only, as the whole module).
class ScikitLearnAutolog(IntegrationCase):
    def test_gridsearch_keeps_every_child_run_with_its_own_params(self) -> None:
        import mlflow.sklearn
        import numpy as np
        from sklearn.model_selection import GridSearchCV
        from sklearn.tree import DecisionTreeClassifier

        rng = np.random.default_rng(0)
        x = rng.normal(size=(60, 3))
        y = (x[:, 0] > 0).astype(int)
        with self.tracking(self.key):
            mlflow.sklearn.autolog(log_models=True, max_tuning_runs=None)
            self.addCleanup(mlflow.sklearn.autolog, disable=True)
            search = GridSearchCV(DecisionTreeClassifier(), {"max_depth": [1, 2, 3, 4]}, cv=2)
            with mlflow.start_run(run_name="grid") as parent:
                search.fit(x, y)
        children = [
            r
            for r in Run.objects.filter(campaign=self.campaign)
            if r.tags.get("mlflow.parentRunId") == parent.info.run_id
        ]
        self.assertEqual(sorted(c.config["max_depth"] for c in children), ["1", "2", "3", "4"])
        # log_model re-sends the run's step-0 metrics with its model id: still stored once.
        grid = Run.objects.get(run_id=parent.info.run_id)
        names = list(grid.metrics.values_list("key__name", flat=True))
        self.assertEqual(len(names), len(set(names)))
