"""Run: buffered metric points, throughput, checkpoints, stop and finish."""

from __future__ import annotations

import contextlib
import decimal
import operator
import os
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from types import TracebackType
from typing import Any, Protocol

from .errors import ApiError, DeskUnavailable, RunStopped
from .heartbeat import Heartbeat
from .spill import Spill
from .wire import (
    FINISH_STATUSES,
    MAX_PENDING_POINTS,
    MAX_POINTS_PER_REQUEST,
    hours_value,
    log,
    metric_value,
    now_iso,
    stop_fields,
)


class Desk(Protocol):
    """What a Run needs of its CampaignDesk (the client module makes Runs; this one does not
    import it back)."""

    def post(self, path: str, body: Any, *, idempotency_key: str | None = None) -> Any: ...

    def get_run(self, run_id: str) -> dict[str, Any]: ...


def run_path(run_id: str, action: str = "") -> str:
    path = f"/runs/{urllib.parse.quote(run_id, safe='')}/"
    return path + (f"{action}/" if action else "")


class Run:
    """One training run: buffered metric points, throughput, checkpoints, stop and finish.

    Made by ``CampaignDesk.run``. ``log`` buffers points and sends them in batches; ``flush``
    sends what is buffered now. Use it as a context manager so the last points are sent and
    the run is finished on the way out::

        with desk.run(campaign=7, run_id="r1", config=cfg) as run:
            for step in range(steps):
                run.log(step, loss=loss)

    While the run is open a heartbeat thread tells the server it is alive. On leaving the block
    normally the run is finished as ``completed``, with the hours the server measures (its start
    to now). On an exception it is finished as ``failed`` (the exception goes on), except
    ``KeyboardInterrupt``/``SystemExit`` (an interrupted job that may resume): then the buffered
    points are sent, the heartbeat stops and the run is left open (the server ends it at its
    last heartbeat once it is silent). On its own ``RunStopped`` the block ends quietly, the
    run is finished (it stays ``stopped``, its hours measured) and ``run.stopped`` is True.
    Once ``finish`` was called in the block, leaving it finishes nothing: a refused finish
    leaves the run as it was, never turned into another.
    """

    def __init__(
        self,
        desk: Desk,
        run_id: str,
        data: Mapping[str, Any],
        *,
        created: bool = True,
        flush_points: int = 1000,
        flush_seconds: float = 10.0,
        max_pending_points: int = MAX_PENDING_POINTS,
        spill_dir: str | os.PathLike[str] | None = None,
        heartbeat: Heartbeat | None = None,
    ) -> None:
        if max_pending_points < flush_points:
            raise ValueError("max_pending_points must be at least flush_points")
        if not 1 <= flush_points <= MAX_POINTS_PER_REQUEST:
            raise ValueError(f"flush_points must be between 1 and {MAX_POINTS_PER_REQUEST}")
        self.desk = desk
        self.run_id = run_id
        self.data: dict[str, Any] = dict(data)
        self.created = created
        self.flush_points = flush_points
        self.flush_seconds = flush_seconds
        self.accepted = 0
        self.finished = False
        # A finish() was attempted: leaving the with block must not turn a refused finish into
        # another one (a "failed" without the hours the caller meant to give).
        self._finish_attempted = False
        self.stopped = False
        self.stop_rule: int | None = None
        self.stop_reason: str | None = None
        self.stop_info: dict[str, Any] | None = None
        self._open: list[dict[str, Any]] = []
        # Batches already given an Idempotency-Key: a failed send is retried with the same key
        # and the same body, so the server never records a batch twice.
        self._sealed: deque[tuple[str, list[dict[str, Any]]]] = deque()
        self.max_pending_points = max_pending_points
        self.dropped_points = 0
        self._spill = Spill(spill_dir, run_id) if spill_dir is not None else None
        self._last_flush = time.monotonic()
        # Background samplers (system_metrics.GpuSampler) whose points go out with the run's.
        self.samplers: list[Any] = []
        self._learn_status(self.data)
        # The run's wall time is the server's to measure: a heartbeat while the run is open.
        self.heartbeat = heartbeat
        if heartbeat is not None and self.data.get("finished_at") is None:
            heartbeat.start()

    def __repr__(self) -> str:
        state = "stopped" if self.stopped else "finished" if self.finished else "running"
        return f"<Run {self.run_id!r} {state}, {self.pending_points} points pending>"

    @property
    def pending_points(self) -> int:
        """Points logged but not yet accepted by the server."""
        spilled = self._spill.points if self._spill is not None else 0
        return len(self._open) + sum(len(points) for _, points in self._sealed) + spilled

    # -- stop state -----------------------------------------------------------------------

    def _learn_status(self, data: Mapping[str, Any]) -> None:
        if data.get("status") == "stopped" or data.get("stopped") is True:
            self._mark_stopped(data.get("stop"))

    def _mark_stopped(self, stop: Any) -> None:
        rule, reason, _, _ = stop_fields(stop)
        self.stopped = True
        self.stop_rule = rule
        self.stop_reason = reason
        self.stop_info = dict(stop) if isinstance(stop, Mapping) else None
        # The server refuses points for a stopped run (409): there is nothing left to send.
        self._open.clear()
        self._sealed.clear()
        if self._spill is not None:
            self._spill.clear()

    def _stopped_error(self) -> RunStopped:
        _, reason, step, at = stop_fields(self.stop_info)
        return RunStopped(
            self.run_id,
            self.stop_rule,
            self.stop_reason or reason,
            step=step,
            at=at,
            stop=self.stop_info,
        )

    def _on_conflict(self, error: ApiError) -> RunStopped:
        """A 409 on run data: find out from the server whether the run was stopped."""
        body = error.body if isinstance(error.body, Mapping) else {}
        if body.get("status") != "stopped" and not isinstance(body.get("stop"), Mapping):
            try:
                body = self.refresh()
            except ApiError:
                raise error from None
        self._learn_status(body)
        if not self.stopped:
            raise error
        return self._stopped_error()

    # -- metrics --------------------------------------------------------------------------

    def log(self, step: int, values: Mapping[str, Any] | None = None, /, **metrics: Any) -> None:
        """Buffer metric values at ``step``: ``run.log(10, loss=2.3, lr=1e-4)``, or a mapping
        for names that are not identifiers: ``run.log(10, {"eval/loss": 2.1})``.

        Values are numbers (NaN and ±Inf included: they feed the stop rules) or the strings
        ``"NaN"``, ``"Infinity"``, ``"-Infinity"``. Sends a batch when ``flush_points`` points
        are waiting or ``flush_seconds`` have passed since the last send. Raises ``RunStopped``
        when the run is stopped. If the server is unreachable even after the retries, the
        points stay buffered, a warning is logged and the loop goes on; ``flush()`` raises.
        """
        if self.stopped:
            raise self._stopped_error()
        if self.finished:
            raise RuntimeError(f"run {self.run_id!r} is finished; start a new run to log more")
        step = operator.index(step)
        items: Iterable[tuple[str, Any]] = (values or {}).items()
        for name, value in [*items, *metrics.items()]:
            self._open.append({"name": name, "step": step, "value": metric_value(name, value)})
        if (
            len(self._open) >= self.flush_points
            or time.monotonic() - self._last_flush >= self.flush_seconds
        ):
            try:
                self.flush()
            except DeskUnavailable as exc:
                self._last_flush = time.monotonic()
                log.warning("run %s: %s; %d points kept", self.run_id, exc, self.pending_points)

    def log_point(self, name: str, step: int, value: Any) -> None:
        """Buffer one point; the same as ``log(step, {name: value})``."""
        self.log(step, {name: value})

    def flush(self) -> int:
        """Send every buffered point now, in batches of at most ``flush_points``; return how
        many the server accepted. Raises ``RunStopped`` when the run is (or just got) stopped,
        ``ApiError`` when the server refuses a batch with a 4xx (that batch is dropped:
        resending it would be refused again), ``DeskUnavailable`` when retries are spent on a
        5xx, a 429 or a connection error (points kept, resent with the same key next time)."""
        if self.stopped:
            raise self._stopped_error()
        self._seal()
        accepted = 0
        if self._spill is not None:
            while self._spill.points:
                key, points = self._spill.first()
                accepted += self._send_batch(key, points)
                self._spill.pop_first()
        while self._sealed:
            key, points = self._sealed[0]
            accepted += self._send_batch(key, points, popped=self._sealed.popleft)
        self._last_flush = time.monotonic()
        return accepted

    def _seal(self) -> None:
        """Give the open points their batches and keys; keep the buffer within its bound."""
        for sampler in self.samplers:
            self._open.extend(sampler.drain())
        while self._open:
            chunk, self._open = self._open[: self.flush_points], self._open[self.flush_points :]
            self._sealed.append((str(uuid.uuid4()), chunk))
        while self._sealed and self.pending_points > self.max_pending_points:
            key, points = self._sealed.popleft() if self._spill is None else self._sealed.pop()
            if self._spill is not None:
                self._spill.append(key, points)
                continue
            self.dropped_points += len(points)
            log.error(
                "run %s: buffer full (%d points): dropped %d unsent points (%d in all); "
                "give spill_dir to keep them",
                self.run_id,
                self.max_pending_points,
                len(points),
                self.dropped_points,
            )

    def _send_batch(
        self, key: str, points: list[dict[str, Any]], popped: Callable[[], Any] | None = None
    ) -> int:
        """POST one sealed batch (retried by the desk with its key); how many were accepted.
        A batch is let go only once the server took it, or refused it for good (a 4xx)."""
        try:
            body = self.desk.post(
                run_path(self.run_id, "metrics"), {"points": points}, idempotency_key=key
            )
        except DeskUnavailable:
            raise  # kept: resent with the same key at the next flush
        except ApiError as error:
            if error.status is not None and error.status >= 500:
                raise  # kept as well: the server may take it later
            if popped is not None:
                popped()
            elif self._spill is not None:
                self._spill.pop_first()
            if error.status == 409:
                raise self._on_conflict(error) from error
            raise
        if popped is not None:
            popped()
        body = body if isinstance(body, Mapping) else {}
        count = int(body.get("accepted", len(points)))
        self.accepted += count
        if body.get("stopped"):
            self._mark_stopped(body.get("stop"))
            raise self._stopped_error()
        return count

    # -- other run data -------------------------------------------------------------------

    def throughput(
        self,
        *,
        tokens_per_second: float | None = None,
        samples_per_second: float | None = None,
        gpus: int = 1,
        measured_seconds: float | None = None,
    ) -> dict[str, Any]:
        """Record measured throughput (tokens or samples per second over ``gpus`` GPUs,
        measured over ``measured_seconds``); the estimates scale a pilot from it. Taken after a
        stop too (never raises ``RunStopped``)."""
        if tokens_per_second is None and samples_per_second is None:
            raise ValueError("give tokens_per_second or samples_per_second")
        body: dict[str, Any] = {"gpus": int(gpus)}
        if tokens_per_second is not None:
            body["tokens_per_second"] = float(tokens_per_second)
        if samples_per_second is not None:
            body["samples_per_second"] = float(samples_per_second)
        if measured_seconds is not None:
            body["measured_seconds"] = float(measured_seconds)
        return self._run_data("throughput", body)

    def checkpoint(
        self,
        *,
        step: int,
        components: Iterable[str],
        size_bytes: int | None = None,
        write_seconds: float | None = None,
        restore_seconds: float | None = None,
        location: str = "",
        resume_verified: bool = False,
    ) -> dict[str, Any]:
        """Record a checkpoint: its ``components`` (``model``, ``optimizer``, ``progress``,
        ``scheduler``, ``scaler``, ``rng``, ``data_position``), size, write/restore times, where
        it lives, and whether a reload **in a new process** was verified. Buffered points are
        sent first. Taken after a stop too. A checkpoint that is no usable resume makes the
        server stop the run: this returns normally, ``run.stopped`` turns True and the next
        ``log`` raises ``RunStopped``."""
        body: dict[str, Any] = {
            "step": operator.index(step),
            "components": list(components),
            "location": location,
            "resume_verified": bool(resume_verified),
        }
        for name, value in (
            ("size_bytes", size_bytes),
            ("write_seconds", write_seconds),
            ("restore_seconds", restore_seconds),
        ):
            if value is not None:
                body[name] = value
        return self._run_data("checkpoints", body)

    def _run_data(self, action: str, body: Mapping[str, Any]) -> dict[str, Any]:
        if not self.stopped and (self._open or self._sealed):
            with contextlib.suppress(RunStopped):
                self.flush()
        answer = self.desk.post(run_path(self.run_id, action), body)
        answer = answer if isinstance(answer, dict) else {}
        if not self.stopped:
            self._learn_status(answer)
        return answer

    def stop(self, reason: str, *, rule: int | None = None) -> dict[str, Any]:
        """Stop the run by hand (``reason`` is required; ``rule`` names the rule it applies).
        Buffered points are sent first; after this, ``log`` raises ``RunStopped``."""
        if not reason.strip():
            raise ValueError("a stop needs a reason")
        if not self.stopped and (self._open or self._sealed):
            with contextlib.suppress(RunStopped):
                self.flush()
        body: dict[str, Any] = {"reason": reason}
        if rule is not None:
            body["rule"] = rule
        answer = self.desk.post(run_path(self.run_id, "stop"), body)
        answer = answer if isinstance(answer, dict) else {}
        self._mark_stopped(answer.get("stop") or {"rule": rule, "reason": reason})
        self.data.update(answer)
        return answer

    def finish(
        self, status: str = "completed", *, observed_hours: float | decimal.Decimal | None = None
    ) -> Any:
        """Send the buffered points, then close the run as ``completed`` or ``failed``, ended
        now: the server measures its hours (now − its start, on this machine's clock, earlier
        segments added, rounded half-up to 0.01 h). They count even when the run did not
        succeed; a stopped run keeps its stop. Leaving a ``with`` block calls it for you.

        ``observed_hours``, when given, are kept as stated instead of the measure: any finite
        number from 0 to ``MAX_OBSERVED_HOURS``. If ``finish`` raises (``ValueError`` for hours
        it cannot send, ``ApiError`` when the server refuses), the run is left as it was (its
        heartbeat goes on), also when the exception leaves a ``with`` block: fix the call and
        finish again. Finishing a finished run again another way raises ``ApiError`` 409."""
        self._finish_attempted = True
        for sampler in self.samplers:
            sampler.close()
            self._open.extend(sampler.drain())  # its last samples go out with the points below
        if status not in FINISH_STATUSES:
            raise ValueError(f"status must be one of {', '.join(FINISH_STATUSES)}")
        body: dict[str, Any] = {"status": status, "ended_at": now_iso()}
        if observed_hours is not None:
            body["observed_hours"] = hours_value(observed_hours)
        if not self.stopped and (self._open or self._sealed):
            with contextlib.suppress(RunStopped):
                self.flush()
        self._stop_heartbeat()
        try:
            answer = self.desk.post(run_path(self.run_id, "finish"), body)
        except BaseException:
            if self.heartbeat is not None:
                self.heartbeat.start()
            raise
        self.finished = True
        if isinstance(answer, dict):
            self.data.update(answer)
            self._learn_status(answer)
        return answer

    def _stop_heartbeat(self) -> None:
        if self.heartbeat is not None:
            self.heartbeat.stop()

    def refresh(self) -> dict[str, Any]:
        """Read the run back from the server (status, stop, latest figures)."""
        self.data = self.desk.get_run(self.run_id)
        return self.data

    # -- context manager ------------------------------------------------------------------

    def __enter__(self) -> Run:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> bool:
        closing = not (self.finished or self._finish_attempted)
        if exc is None:
            if closing:
                self.finish("completed")
            return False
        own_stop = isinstance(exc, RunStopped) and exc.run_id == self.run_id
        try:
            if closing and (own_stop or isinstance(exc, Exception)):
                # A stopped run keeps its stop: the finish records its measured hours.
                self.finish("failed")
            else:  # KeyboardInterrupt, SystemExit: left open for a resume, silent from now
                self._stop_heartbeat()
                if not self.stopped and self.pending_points:
                    self.flush()
        except Exception as cleanup:  # the loop's own exception matters more
            log.warning("run %s: could not close after %r: %s", self.run_id, exc, cleanup)
        return own_stop
