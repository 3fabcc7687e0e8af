"""A run's heartbeat and its GPU count (standard library only).

While a ``Run`` is open, a daemon thread posts ``POST /runs/{run_id}/heartbeat/`` every
``every`` seconds with the GPU count: the server ends a run it has not heard from for a
multiple of that interval as ``failed``, its hours ending at the last heartbeat (a crashed or
killed loop; docs/domain.md §5.8). The thread never raises into the loop: a network error or a
5xx is logged and the next beat tries again; a 409 (the run was finished or the campaign
closed) or a 404 ends it. It sends no ``Idempotency-Key`` (a heartbeat repeated is harmless)
and does not retry within a beat.

GPU count, when the caller gives none (``detect_gpus``): the devices ``CUDA_VISIBLE_DEVICES``
lists when it is set (``""`` or ``-1``: none), else the GPUs ``nvidia-smi --list-gpus`` lists,
else 1. A run on no GPU still occupies its machine: it counts as 1.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import threading
from collections.abc import Callable
from typing import Any

from .errors import ApiError, DeskUnavailable
from .wire import log


def detect_gpus() -> int:
    """The GPUs this process sees (the rule above); 1 when it cannot tell or sees none."""
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is not None:
        devices = [d for d in visible.split(",") if d.strip()]
        return 1 if not devices or devices[0].strip() == "-1" else len(devices)
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return 1
    try:
        listed = subprocess.run(
            [smi, "--list-gpus"], capture_output=True, text=True, timeout=10, check=True
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return 1
    return max(sum(1 for line in listed.splitlines() if line.startswith("GPU ")), 1)


class Heartbeat:
    """Calls ``send()`` every ``every`` seconds in a daemon thread until ``stop()``."""

    def __init__(self, send: Callable[[], Any], every: float, run_id: str) -> None:
        self._send = send
        self.every = every
        self.run_id = run_id
        self.sent = 0
        self._stopped = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def alive(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def start(self) -> None:
        if self.alive or self.every <= 0:
            return
        self._stopped.clear()
        self._thread = threading.Thread(
            target=self._loop, name=f"campaign-desk-heartbeat-{self.run_id}", daemon=True
        )
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        self._stopped.set()
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)

    def _loop(self) -> None:
        while not self._stopped.wait(self.every):
            try:
                self._send()
                self.sent += 1
            except DeskUnavailable as exc:
                log.warning("run %s: heartbeat not sent: %s", self.run_id, exc)
            except ApiError as exc:
                if exc.status in (404, 409):
                    log.info("run %s: heartbeat ends (%s)", self.run_id, exc.status)
                    return
                log.warning("run %s: heartbeat refused: %s", self.run_id, exc)
            except Exception as exc:  # the loop must never die of its heartbeat
                log.warning("run %s: heartbeat not sent: %s", self.run_id, exc)
