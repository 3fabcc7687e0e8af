"""The module-level API, as the peers' users type it (docs/client.md)::

    import cdesk

    cdesk.init(campaign=7, run_id="lora-r16-s1", config={"lr": 2e-4}, system_metrics=True)
    for step in range(steps):
        cdesk.log(step, loss=loss)      # raises RunStopped when the run is stopped
    cdesk.finish()

One run at a time per process. ``init`` takes the server and key from its arguments or from
``CAMPAIGN_DESK_URL`` / ``CAMPAIGN_DESK_KEY``; a run not finished by the end of the script is
finished then: ``completed``, or ``failed`` after an uncaught exception. The context manager
(``CampaignDesk.run``) stays the way to scope a run to a block.
"""

from __future__ import annotations

import atexit
import sys
from collections.abc import Mapping
from types import TracebackType
from typing import Any

from .client import CampaignDesk
from .run import Run
from .system_metrics import DEFAULT_INTERVAL, sample_gpus

_state: dict[str, Any] = {"run": None, "failed": False, "hooked": False}


def init(
    *,
    campaign: int,
    run_id: str,
    variant: int | None = None,
    kind: str = "full",
    config: Mapping[str, Any] | None = None,
    url: str | None = None,
    key: str | None = None,
    system_metrics: bool = False,
    system_interval: float = DEFAULT_INTERVAL,
    **options: Any,
) -> Run:
    """Start (or take up again) the process's run; ``system_metrics`` samples the GPUs through
    NVML where it is installed. ``options`` go to ``CampaignDesk.run`` (``flush_points``, …)."""
    if _state["run"] is not None and not _state["run"].finished:
        raise RuntimeError("a run is already active: cdesk.finish() it first")
    desk = CampaignDesk(url, key)
    run = desk.run(
        campaign=campaign, run_id=run_id, variant=variant, kind=kind, config=config, **options
    )
    if system_metrics:
        sample_gpus(run, interval=system_interval)
    _state["run"] = run
    _hook_exit()
    return run


def active() -> Run:
    run = _state["run"]
    if run is None:
        raise RuntimeError("no active run: call cdesk.init(...) first")
    return run  # type: ignore[no-any-return]


def log(step: int, values: Mapping[str, Any] | None = None, /, **metrics: Any) -> None:
    """``Run.log`` on the active run."""
    active().log(step, values, **metrics)


def finish(status: str = "completed", *, observed_hours: Any = None) -> Any:
    """Finish the active run (``Run.finish``); the module is then ready for another ``init``."""
    run = active()
    try:
        return run.finish(status, observed_hours=observed_hours)
    finally:
        _state["run"] = None


def _hook_exit() -> None:
    if _state["hooked"]:
        return
    _state["hooked"] = True
    previous = sys.excepthook

    def noting_failure(
        kind: type[BaseException], error: BaseException, tb: TracebackType | None
    ) -> None:
        _state["failed"] = not isinstance(error, KeyboardInterrupt)
        previous(kind, error, tb)

    sys.excepthook = noting_failure
    atexit.register(_finish_at_exit)


def _finish_at_exit() -> None:
    run = _state["run"]
    if run is None or run.finished or run.stopped:
        return
    try:
        finish("failed" if _state["failed"] else "completed")
    except Exception as exc:  # the process is ending: say so, never raise from atexit
        print(f"cdesk: could not finish run {run.run_id}: {exc}", file=sys.stderr)
