"""Campaign Desk client: runs, buffered metrics, throughput, checkpoints, stops and retries.

Standard library only. One ``CampaignDesk`` per process is enough; it is not thread-safe (a
training loop logs from one thread). Nothing here imports Django.

Stops: when the server stops a run (a stop rule fired, or someone stopped it), ``run.stopped``
turns True, ``run.stop_rule`` / ``run.stop_reason`` say which rule and why, and ``log`` and
``flush`` **raise** ``RunStopped`` from then on. ``throughput``, ``checkpoint`` and ``finish``
never raise it: the server still takes those after a stop (the hours count, and the checkpoints
say where to resume); they only update ``run.stopped``. Used as a context manager, a ``Run``
swallows its own ``RunStopped``: the ``with`` block simply ends at the stop, and the code after
it can look at ``run.stopped``.

Retries: connection errors, timeouts, 429 and 503 (honouring ``Retry-After``: the server
answers 503 while its database or Redis is unavailable), 500, 502 and 504 are retried with
exponential backoff and jitter, and so is the server's 409 "a request with this
Idempotency-Key is still in progress" (a retry that overtook its first attempt). Every POST
carries one ``Idempotency-Key`` (uuid4) that all its retries reuse, so a retry never records
anything twice. Other 4xx answers raise ``ApiError`` at once, with the status and the
decoded JSON body.

Points are never dropped for an outage: a batch the server did not accept stays buffered
(``run.pending_points`` says how many) and is resent, with its key, at the next flush. The
buffer is bounded (``max_pending_points``); beyond it, with ``spill_dir`` given, batches go to
``<spill_dir>/<run_id>.jsonl`` (read back, and resent first, by the next ``Run`` with that id:
a crashed job loses nothing either), else the oldest batches are dropped with an error in the
log and counted in ``run.dropped_points``.
"""

from __future__ import annotations

import contextlib
import decimal
import email.utils
import http.client
import json
import logging
import math
import operator
import os
import random
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, Final

__all__ = ["ApiError", "CampaignDesk", "DeskUnavailable", "Response", "Run", "RunStopped"]

log = logging.getLogger("campaign_desk_client")

#: The server refuses (413) a metrics batch of more points than this.
MAX_POINTS_PER_REQUEST: Final = 10_000
#: Answers worth retrying: the server or a proxy in front of it is busy or restarting.
RETRY_STATUSES: Final = frozenset({429, 500, 502, 503, 504})
#: Points a Run keeps in memory, unsent, before it spills (or drops the oldest).
MAX_PENDING_POINTS: Final = 1_000_000
RUN_KINDS: Final = ("pilot", "full", "inference")
FINISH_STATUSES: Final = ("completed", "failed")
#: The most hours the server takes for a run (it rounds any number of hours to 0.01 h).
MAX_OBSERVED_HOURS: Final = 100_000
_NO_BODY: Final = object()


# --- Errors ------------------------------------------------------------------------------


class ApiError(Exception):
    """The server refused a request: ``status`` is the HTTP status, ``body`` the decoded JSON
    (a dict for DRF field errors, e.g. ``{"points": ["..."]}``), or the text when not JSON."""

    def __init__(self, status: int | None, body: Any, method: str, path: str) -> None:
        self.status = status
        self.body = body
        self.method = method
        self.path = path
        super().__init__(f"{method} {path} answered {status}: {_short(body)}")


class DeskUnavailable(ApiError):
    """Retries are exhausted: the server stayed unreachable (``status`` None, ``__cause__`` the
    last connection error) or kept answering 429/502/503/504 (``status`` the last one)."""

    def __init__(
        self, status: int | None, body: Any, method: str, path: str, attempts: int
    ) -> None:
        self.attempts = attempts
        super().__init__(status, body, method, path)
        self.args = (
            f"{method} {path}: no usable answer after {attempts} attempts ({_short(body)})",
        )


class RunStopped(Exception):
    """The server stopped this run: ``rule`` is the stop rule's id (None for a manual stop),
    ``reason`` the words it gave, ``step`` / ``at`` where and when, ``stop`` the raw object."""

    def __init__(
        self,
        run_id: str,
        rule: int | None,
        reason: str,
        *,
        step: int | None = None,
        at: str | None = None,
        stop: Mapping[str, Any] | None = None,
    ) -> None:
        self.run_id = run_id
        self.rule = rule
        self.reason = reason
        self.step = step
        self.at = at
        self.stop = dict(stop or {})
        by = f"rule #{rule}" if rule is not None else "hand"
        super().__init__(f"run {run_id!r} was stopped by {by}: {reason}")


def _short(body: Any, limit: int = 500) -> str:
    text = body if isinstance(body, str) else json.dumps(body, default=str)
    return text if len(text) <= limit else text[:limit] + "…"


# --- HTTP --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Response:
    """A successful answer: status, decoded JSON body, headers, and the Idempotency-Key sent."""

    status: int
    body: Any
    headers: Mapping[str, str] = field(default_factory=dict)
    idempotency_key: str | None = None


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """Never follow a redirect: urllib would turn a redirected POST into a GET without its body.
    The 3xx surfaces as an ApiError that names the new location instead."""

    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


def _dumps(body: Any) -> bytes:
    # allow_nan (the default, spelled out): NaN, Infinity and -Infinity are written as the bare
    # tokens the server accepts; a diverging loss must reach the stop rules as it is.
    return json.dumps(body, allow_nan=True, separators=(",", ":")).encode()


def _decode(raw: bytes, content_type: str) -> Any:
    if not raw:
        return None
    text = raw.decode("utf-8", errors="replace")
    if "json" in content_type or text[:1] in "{[":
        try:
            return json.loads(text)
        except ValueError:
            pass
    return text


def _retry_after(value: str | None) -> float | None:
    """Seconds to wait from a Retry-After header: delta-seconds or an HTTP date."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def _in_flight(status: int, body: Any) -> bool:
    """The server's 409 for a retry that arrived while the first attempt still runs."""
    detail = body.get("detail") if isinstance(body, Mapping) else None
    return status == 409 and isinstance(detail, str) and "still in progress" in detail


def _api_root(url: str) -> str:
    root = url.rstrip("/")
    if not root.endswith("/api/v1"):
        root += "/api/v1"
    return root


class CampaignDesk:
    """A connection to one Campaign Desk server.

    ``url`` is the server (``https://desk.example.org``; a trailing ``/api/v1`` is fine) and
    ``key`` a campaign ingest key (``cdk_…``, sent as ``Authorization: Bearer``) or a user's API
    token (sent as ``Authorization: Token``); both default to the ``CAMPAIGN_DESK_URL`` and
    ``CAMPAIGN_DESK_KEY`` environment variables, so no secret needs to live in the script.
    ``scheme`` forces ``"Bearer"`` or ``"Token"``.

    Retry policy: up to ``max_retries`` retries after the first attempt; the n-th waits a random
    time in ``[d/2, d]`` with ``d = min(max_backoff, backoff * 2**n)``, or the server's
    ``Retry-After`` (capped at ``max_retry_after``) when it sends one.
    """

    def __init__(
        self,
        url: str | None = None,
        key: str | None = None,
        *,
        scheme: str | None = None,
        timeout: float = 30.0,
        max_retries: int = 6,
        backoff: float = 0.5,
        max_backoff: float = 30.0,
        max_retry_after: float = 120.0,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        url = url or os.environ.get("CAMPAIGN_DESK_URL")
        key = key or os.environ.get("CAMPAIGN_DESK_KEY")
        if not url:
            raise ValueError("give the server URL, or set CAMPAIGN_DESK_URL")
        if not key:
            raise ValueError("give an ingest key or API token, or set CAMPAIGN_DESK_KEY")
        if max_retries < 0 or backoff < 0 or max_backoff < 0:
            raise ValueError("max_retries, backoff and max_backoff must be >= 0")
        self.root = _api_root(url)
        self.scheme = scheme or ("Bearer" if key.startswith("cdk_") else "Token")
        self._authorization = f"{self.scheme} {key}"
        self.timeout = timeout
        self.max_retries = max_retries
        self.backoff = backoff
        self.max_backoff = max_backoff
        self.max_retry_after = max_retry_after
        self._sleep = sleep
        self._opener = urllib.request.build_opener(_NoRedirect())

    def __repr__(self) -> str:
        return f"CampaignDesk({self.root!r}, scheme={self.scheme!r})"

    # -- low level ------------------------------------------------------------------------

    def request(
        self,
        method: str,
        path: str,
        body: Any = _NO_BODY,
        *,
        idempotency_key: str | None = None,
        retry: bool = True,
    ) -> Response:
        """Send one logical request, retried as the class docstring says; return the answer.

        ``path`` is relative to ``/api/v1`` (``"/runs/r1/"``). A POST gets a fresh uuid4
        ``Idempotency-Key`` unless one is given; every retry reuses it, so sending the same
        request again with the same key replays the stored answer and creates nothing.
        Raises ``ApiError`` (a 4xx/5xx not worth retrying), ``DeskUnavailable`` (retries spent).
        """
        method = method.upper()
        if method == "POST" and idempotency_key is None:
            idempotency_key = str(uuid.uuid4())
        data = None if body is _NO_BODY else _dumps(body)
        url = self.root + "/" + path.lstrip("/")
        headers = {
            "Authorization": self._authorization,
            "Accept": "application/json",
            "User-Agent": "campaign-desk-client/0.1",
        }
        if data is not None:
            headers["Content-Type"] = "application/json"
        if idempotency_key is not None:
            headers["Idempotency-Key"] = idempotency_key

        attempt = 0
        while True:
            try:
                status, reply_headers, raw = self._send(method, url, data, headers)
            except (OSError, http.client.HTTPException) as exc:
                if not retry or attempt >= self.max_retries:
                    raise DeskUnavailable(
                        None, f"{type(exc).__name__}: {exc}", method, path, attempt + 1
                    ) from exc
                delay = self._backoff_delay(attempt)
                log.warning("%s %s: %s; retrying in %.2f s", method, path, exc, delay)
            else:
                decoded = _decode(raw, reply_headers.get("Content-Type", ""))
                if status < 300:
                    return Response(status, decoded, reply_headers, idempotency_key)
                if status not in RETRY_STATUSES and not _in_flight(status, decoded):
                    if 300 <= status < 400 and "Location" in reply_headers:
                        decoded = {"redirect": reply_headers["Location"], "body": decoded}
                    raise ApiError(status, decoded, method, path)
                if not retry or attempt >= self.max_retries:
                    raise DeskUnavailable(status, decoded, method, path, attempt + 1)
                delay = self._backoff_delay(attempt)
                wait = _retry_after(reply_headers.get("Retry-After"))
                if wait is not None:
                    delay = min(wait, self.max_retry_after) + random.uniform(0, self.backoff)
                log.warning("%s %s answered %s; retrying in %.2f s", method, path, status, delay)
            self._sleep(delay)
            attempt += 1

    def _backoff_delay(self, attempt: int) -> float:
        ceiling = min(self.max_backoff, self.backoff * (2**attempt))
        return random.uniform(ceiling / 2, ceiling)

    def _send(
        self, method: str, url: str, data: bytes | None, headers: Mapping[str, str]
    ) -> tuple[int, dict[str, str], bytes]:
        req = urllib.request.Request(url, data=data, headers=dict(headers), method=method)
        try:
            with self._opener.open(req, timeout=self.timeout) as reply:
                return reply.status, dict(reply.headers.items()), reply.read()
        except urllib.error.HTTPError as err:
            with err:
                return err.code, dict(err.headers.items()), err.read()

    def get(self, path: str) -> Any:
        """GET ``path`` (relative to ``/api/v1``) and return the decoded JSON."""
        return self.request("GET", path).body

    def post(self, path: str, body: Any, *, idempotency_key: str | None = None) -> Any:
        """POST ``body`` as JSON (with an Idempotency-Key) and return the decoded JSON."""
        return self.request("POST", path, body, idempotency_key=idempotency_key).body

    # -- runs -----------------------------------------------------------------------------

    def run(
        self,
        *,
        campaign: int,
        run_id: str,
        variant: int | None = None,
        kind: str = "full",
        config: Mapping[str, Any] | None = None,
        flush_points: int = 1000,
        flush_seconds: float = 10.0,
        max_pending_points: int = MAX_PENDING_POINTS,
        spill_dir: str | os.PathLike[str] | None = None,
    ) -> Run:
        """Create run ``run_id`` in ``campaign`` (or take it up again) and return its ``Run``.

        Calling it again with the same ``run_id`` and ``config`` (a restarted job) answers the
        same run; another ``config`` under the same id raises ``ApiError`` 409: a new
        configuration needs a new run id. A run the server has already stopped comes back with
        ``stopped`` True. Metric points are sent every ``flush_points`` points (at most 10,000)
        or at the first ``log`` after ``flush_seconds``, whichever comes first.
        """
        if kind not in RUN_KINDS:
            raise ValueError(f"kind must be one of {', '.join(RUN_KINDS)}, not {kind!r}")
        body: dict[str, Any] = {"run_id": run_id, "kind": kind, "config": dict(config or {})}
        if variant is not None:
            body["variant"] = variant
        answer = self.request("POST", f"/campaigns/{int(campaign)}/runs/", body)
        return Run(
            self,
            run_id,
            answer.body if isinstance(answer.body, dict) else {},
            created=answer.status == 201,
            flush_points=flush_points,
            flush_seconds=flush_seconds,
            max_pending_points=max_pending_points,
            spill_dir=spill_dir,
        )

    def get_run(self, run_id: str) -> dict[str, Any]:
        """The run as the server has it: status, stop (rule, reason, at), latest figures."""
        body = self.get(_run_path(run_id))
        return body if isinstance(body, dict) else {}


def _run_path(run_id: str, action: str = "") -> str:
    path = f"/runs/{urllib.parse.quote(run_id, safe='')}/"
    return path + (f"{action}/" if action else "")


def _stop_fields(stop: Any) -> tuple[int | None, str, int | None, str | None]:
    """(rule id, reason, step, at) from the server's stop object, tolerant of its spelling."""
    if not isinstance(stop, Mapping):
        return None, str(stop or "stopped"), None, None
    rule = stop.get("rule", stop.get("rule_id"))
    if isinstance(rule, Mapping):
        rule = rule.get("id")
    step = stop.get("step")
    return (
        int(rule) if isinstance(rule, int | str) and str(rule).isdigit() else None,
        str(stop.get("reason") or "stopped"),
        int(step) if isinstance(step, int) else None,
        stop.get("at"),
    )


def _metric_value(name: str, value: Any) -> float | str:
    if isinstance(value, bool):
        raise TypeError(f"metric {name!r}: a bool is not a measurement")
    if isinstance(value, str):
        if value.lower().lstrip("+-") not in {"nan", "inf", "infinity"}:
            raise TypeError(f"metric {name!r}: a string value must be NaN, Infinity or -Infinity")
        return value
    try:
        # float() also takes numpy scalars and one-element tensors (loss.item() is cheaper).
        return float(value)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"metric {name!r}: {value!r} is not a number") from exc


def _hours(value: Any) -> float | str:
    """Observed hours as sent: a finite number from 0 to MAX_OBSERVED_HOURS (ValueError else).
    A Decimal goes as its decimal string, exactly; anything else as a JSON number."""
    if isinstance(value, bool):
        raise ValueError("observed_hours is a number of hours, not a bool")
    if isinstance(value, decimal.Decimal):
        if not value.is_finite() or not 0 <= value <= MAX_OBSERVED_HOURS:
            raise ValueError(f"observed_hours must be from 0 to {MAX_OBSERVED_HOURS}, not {value}")
        return f"{value.copy_abs():f}"  # "-0" would be refused; abs() would round to 28 digits
    try:
        hours = float(value)  # numpy scalars and tensors too
    except (TypeError, ValueError) as exc:
        raise ValueError(f"observed_hours must be a number, not {value!r}") from exc
    if not math.isfinite(hours) or not 0 <= hours <= MAX_OBSERVED_HOURS:
        raise ValueError(f"observed_hours must be from 0 to {MAX_OBSERVED_HOURS}, not {value!r}")
    return hours


class _Spill:
    """Sealed batches on disk, oldest first: one JSON line each (key and points). Rewritten
    whole when the first is let go (spilling is rare: the buffer was full)."""

    def __init__(self, directory: str | os.PathLike[str], run_id: str) -> None:
        os.makedirs(directory, exist_ok=True)
        safe = urllib.parse.quote(run_id, safe="")
        self.path = os.path.join(os.fspath(directory), f"{safe}.jsonl")
        self.batches: list[tuple[str, list[dict[str, Any]]]] = []
        if os.path.exists(self.path):
            with open(self.path, encoding="utf-8") as handle:
                for line in handle:
                    if line.strip():
                        item = json.loads(line)
                        self.batches.append((str(item["key"]), list(item["points"])))

    @property
    def points(self) -> int:
        return sum(len(points) for _, points in self.batches)

    def first(self) -> tuple[str, list[dict[str, Any]]]:
        return self.batches[0]

    def append(self, key: str, points: list[dict[str, Any]]) -> None:
        self.batches.append((key, points))
        with open(self.path, "a", encoding="utf-8") as handle:
            handle.write(_dumps({"key": key, "points": points}).decode() + "\n")

    def pop_first(self) -> None:
        self.batches.pop(0)
        self._rewrite()

    def clear(self) -> None:
        self.batches.clear()
        self._rewrite()

    def _rewrite(self) -> None:
        if not self.batches:
            with contextlib.suppress(FileNotFoundError):
                os.remove(self.path)
            return
        partial = self.path + ".partial"
        with open(partial, "w", encoding="utf-8") as handle:
            for key, points in self.batches:
                handle.write(_dumps({"key": key, "points": points}).decode() + "\n")
        os.replace(partial, self.path)


class Run:
    """One training run: buffered metric points, throughput, checkpoints, stop and finish.

    Made by ``CampaignDesk.run``. ``log`` buffers points and sends them in batches; ``flush``
    sends what is buffered now. Use it as a context manager so the last points are sent and
    the run is finished on the way out::

        with desk.run(campaign=7, run_id="r1", config=cfg) as run:
            for step in range(steps):
                run.log(step, loss=loss)

    On leaving the block normally the run is finished as ``completed``. On an exception it is
    finished as ``failed`` (the exception goes on), except ``KeyboardInterrupt``/``SystemExit``
    (an interrupted job that may resume): then the buffered points are sent and the run is left
    running. On its own ``RunStopped`` the block ends quietly and ``run.stopped`` is True. Once
    ``finish`` was called in the block, leaving it finishes nothing: a refused finish leaves
    the run as it was, never turned into another (a ``failed`` without the hours).
    """

    def __init__(
        self,
        desk: CampaignDesk,
        run_id: str,
        data: Mapping[str, Any],
        *,
        created: bool = True,
        flush_points: int = 1000,
        flush_seconds: float = 10.0,
        max_pending_points: int = MAX_PENDING_POINTS,
        spill_dir: str | os.PathLike[str] | None = None,
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
        self._spill = _Spill(spill_dir, run_id) if spill_dir is not None else None
        self._last_flush = time.monotonic()
        self._learn_status(self.data)

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
        rule, reason, _, _ = _stop_fields(stop)
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
        _, reason, step, at = _stop_fields(self.stop_info)
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
            self._open.append({"name": name, "step": step, "value": _metric_value(name, value)})
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
                _run_path(self.run_id, "metrics"), {"points": points}, idempotency_key=key
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
        answer = self.desk.post(_run_path(self.run_id, action), body)
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
        answer = self.desk.post(_run_path(self.run_id, "stop"), body)
        answer = answer if isinstance(answer, dict) else {}
        self._mark_stopped(answer.get("stop") or {"rule": rule, "reason": reason})
        self.data.update(answer)
        return answer

    def finish(
        self, status: str = "completed", *, observed_hours: float | decimal.Decimal | None = None
    ) -> Any:
        """Send the buffered points, then close the run as ``completed`` or ``failed`` with the
        ``observed_hours`` it took (they count even when the run did not succeed).

        ``observed_hours`` is any finite number from 0 to ``MAX_OBSERVED_HOURS`` (``elapsed /
        3600`` as it comes; the server rounds to 0.01 h). A stopped run keeps its stop;
        finishing records its hours. Call it as the last line of a ``with`` block to give the
        hours (leaving the block then finishes nothing more). If ``finish`` raises (``ValueError``
        for hours it cannot send, ``ApiError`` when the server refuses), the run is left as it
        was, also when the exception leaves a ``with`` block: fix the call and finish again.
        Finishing a finished run again another way raises ``ApiError`` 409."""
        self._finish_attempted = True
        if status not in FINISH_STATUSES:
            raise ValueError(f"status must be one of {', '.join(FINISH_STATUSES)}")
        body: dict[str, Any] = {"status": status}
        if observed_hours is not None:
            body["observed_hours"] = _hours(observed_hours)
        if not self.stopped and (self._open or self._sealed):
            with contextlib.suppress(RunStopped):
                self.flush()
        answer = self.desk.post(_run_path(self.run_id, "finish"), body)
        self.finished = True
        if isinstance(answer, dict):
            self.data.update(answer)
            self._learn_status(answer)
        return answer

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
        if exc is None:
            if not (self.finished or self._finish_attempted):
                self.finish("completed")
            return False
        if isinstance(exc, RunStopped) and exc.run_id == self.run_id:
            return True
        try:
            if isinstance(exc, Exception) and not (
                self.finished or self.stopped or self._finish_attempted
            ):
                self.finish("failed")
            elif not self.stopped and self.pending_points:
                self.flush()
        except Exception as cleanup:  # the loop's own exception matters more
            log.warning("run %s: could not close after %r: %s", self.run_id, exc, cleanup)
        return False
