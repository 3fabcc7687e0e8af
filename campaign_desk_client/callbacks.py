"""Stop rules that reach the Hugging Face Trainer and Lightning loops (docs/mlflow.md).

Both loops log to MLflow in ways that cannot carry a stop back to the loop: transformers 5.x
logs asynchronously (a refused call only prints an ERROR line), and a synchronous refusal
raises out of ``trainer.fit()`` without a checkpoint. These callbacks ask the run's status
instead (``GET /api/v1/runs/{run_id}/``, at most every ``every_seconds``) and, once a rule
has stopped the run, let the loop save a checkpoint and end training at that step, or at the
end of the grace the rule states (``grace_steps`` after the firing step, ``grace_minutes``
after the stop: the server still takes the loop's points until then). ``grace_steps=N`` given
to the callback overrides the rule's: N steps after the stop is seen.

    from campaign_desk_client.callbacks import DeskTrainerCallback     # transformers
    trainer = Trainer(..., args=TrainingArguments(report_to=["mlflow"]),
                      callbacks=[DeskTrainerCallback()])

    from campaign_desk_client.callbacks import DeskLightningCallback   # lightning
    trainer = L.Trainer(logger=MLFlowLogger(...), callbacks=[DeskLightningCallback()])

The server and key come from ``MLFLOW_TRACKING_URI`` (``http://HOST/mlflow`` → ``http://HOST``)
and ``MLFLOW_TRACKING_TOKEN`` (or ``CAMPAIGN_DESK_URL`` / ``CAMPAIGN_DESK_KEY``), the run id from
the active MLflow run (or ``MLFLOW_RUN_ID``, or the Lightning MLFlowLogger's run). transformers
and lightning are imported only when their callback class is first used.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from campaign_desk_client.client import CampaignDesk
from campaign_desk_client.errors import ApiError

log = logging.getLogger(__name__)

DEFAULT_EVERY_SECONDS = 5.0


@dataclass(frozen=True)
class Stop:
    """A stop the server recorded for the run: the rule, its reason and the step it fired at."""

    rule: int | None
    reason: str
    step: int | None
    until_step: int | None = None  # the rule's grace: the last step the server takes
    deadline: float | None = None  # the rule's grace in minutes, on this process's clock


def _desk_from_env() -> CampaignDesk:
    url = os.environ.get("CAMPAIGN_DESK_URL") or ""
    if not url:
        tracking = os.environ.get("MLFLOW_TRACKING_URI", "").rstrip("/")
        url = tracking.removesuffix("/mlflow") if tracking.startswith("http") else ""
    key = os.environ.get("CAMPAIGN_DESK_KEY") or os.environ.get("MLFLOW_TRACKING_TOKEN")
    # One try per poll: a missed poll is retried at the next interval, never blocks the loop.
    return CampaignDesk(url or None, key or None, max_retries=0, timeout=10.0)


def _active_mlflow_run_id() -> str | None:
    try:
        import mlflow
    except ImportError:
        return os.environ.get("MLFLOW_RUN_ID") or None
    active = mlflow.active_run()
    return active.info.run_id if active is not None else os.environ.get("MLFLOW_RUN_ID") or None


class StopWatch:
    """Polls one run's status, at most every ``every_seconds``; ``due(step)`` says when the loop
    should save and end: the stop is known and its grace is over (the rule's, or
    ``grace_steps`` steps since the stop was seen when given)."""

    def __init__(
        self,
        *,
        run_id: str | None = None,
        desk: CampaignDesk | None = None,
        every_seconds: float = DEFAULT_EVERY_SECONDS,
        grace_steps: int | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if every_seconds < 0 or (grace_steps is not None and grace_steps < 0):
            raise ValueError("every_seconds and grace_steps are >= 0")
        self.run_id = run_id
        self._desk = desk
        self.every_seconds = every_seconds
        self.grace_steps = grace_steps
        self._clock = clock
        self._last_poll: float | None = None
        self.stop: Stop | None = None
        self.seen_at_step: int | None = None
        self.polls = 0

    def _poll(self) -> None:
        now = self._clock()
        if self._last_poll is not None and now - self._last_poll < self.every_seconds:
            return
        self._last_poll = now
        self.run_id = self.run_id or _active_mlflow_run_id()
        if not self.run_id:
            return
        self._desk = self._desk or _desk_from_env()
        self.polls += 1
        try:
            run = self._desk.get_run(self.run_id)
        except ApiError as exc:  # the loop goes on; the next poll tries again
            log.warning("Campaign Desk: could not read run %s: %s", self.run_id, exc)
            return
        stop = run.get("stop") if run.get("status") == "stopped" else None
        if isinstance(stop, dict):
            left = stop.get("grace_seconds_left")
            self.stop = Stop(
                stop.get("rule"),
                str(stop.get("reason") or "stopped"),
                stop.get("step"),
                until_step=stop.get("grace_until_step"),
                # Counted from before the request: the server's window ends no later.
                deadline=now + float(left) if isinstance(left, int | float) else None,
            )

    def _grace_over(self, stop: Stop, seen: int, step: int) -> bool:
        if self.grace_steps is not None:
            return step >= seen + self.grace_steps
        if stop.deadline is not None and self._clock() >= stop.deadline:
            return True
        if stop.until_step is not None:
            return step >= stop.until_step
        return stop.deadline is None

    def due(self, step: int) -> bool:
        if self.stop is None:
            self._poll()
        if self.stop is None:
            return False
        if self.seen_at_step is None:
            self.seen_at_step = step
            log.error(
                "Campaign Desk stopped run %s (rule #%s at step %s): %s",
                self.run_id,
                self.stop.rule,
                self.stop.step,
                self.stop.reason,
            )
        return self._grace_over(self.stop, self.seen_at_step, step)


def _trainer_callback_class() -> type:
    from transformers import TrainerCallback

    class DeskTrainerCallback(TrainerCallback):  # type: ignore[misc,unused-ignore]
        """Hugging Face Trainer: on the step a stop is known, save a checkpoint and end."""

        def __init__(self, **watch: Any) -> None:
            self.watch = StopWatch(**watch)

        def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> Any:
            if self.watch.due(int(state.global_step)):
                control.should_save = True
                control.should_training_stop = True
            return control

    return DeskTrainerCallback


def _lightning_callback_class() -> type:
    from lightning.pytorch.callbacks import Callback

    class DeskLightningCallback(Callback):  # type: ignore[misc,unused-ignore]
        """Lightning: checked before each batch, so a stopped run logs nothing more (a
        synchronous MLflow logger would raise); saves a checkpoint and ends fit()."""

        def __init__(self, **watch: Any) -> None:
            self.watch = StopWatch(**watch)
            self.checkpoint_path: str | None = None

        def _run_id(self, trainer: Any) -> None:
            if self.watch.run_id:
                return
            for logger in getattr(trainer, "loggers", []) or []:
                run_id = getattr(logger, "run_id", None)
                if isinstance(run_id, str) and run_id:
                    self.watch.run_id = run_id
                    return

        def on_train_batch_start(self, trainer: Any, pl_module: Any, batch: Any, idx: int) -> None:
            self._run_id(trainer)
            step = int(trainer.global_step)
            if not self.watch.due(step):
                return
            ckpt = getattr(trainer, "checkpoint_callback", None)
            folder = getattr(ckpt, "dirpath", None) or trainer.default_root_dir
            self.checkpoint_path = os.path.join(folder, f"desk-stopped-step={step}.ckpt")
            trainer.save_checkpoint(self.checkpoint_path)
            trainer.should_stop = True
            # A callback's return value is ignored by Lightning; StopIteration is what its epoch
            # loop ends on (the batch is neither run nor logged), and should_stop ends fit(),
            # which then ends the MLflow run as usual.
            raise StopIteration

    return DeskLightningCallback


_FACTORIES = {
    "DeskTrainerCallback": _trainer_callback_class,
    "DeskLightningCallback": _lightning_callback_class,
}
_BUILT: dict[str, type] = {}


def __getattr__(name: str) -> type:
    """Build a callback class on first use, importing its library only then."""
    factory = _FACTORIES.get(name)
    if factory is None:
        raise AttributeError(name)
    if name not in _BUILT:
        _BUILT[name] = factory()
    return _BUILT[name]
