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

Time: a run's wall time is the server's to measure from what the client sends: its start when
the run is opened, a heartbeat (``heartbeat.py``) while it is open, its end when it finishes
(leaving the ``with`` block finishes it). Hours are sent only when the caller states them.

Points are never dropped for an outage: a batch the server did not accept stays buffered
(``run.pending_points`` says how many) and is resent, with its key, at the next flush. The
buffer is bounded (``max_pending_points``); beyond it, with ``spill_dir`` given, batches go to
``<spill_dir>/<run_id>.jsonl`` (read back, and resent first, by the next ``Run`` with that id:
a crashed job loses nothing either), else the oldest batches are dropped with an error in the
log and counted in ``run.dropped_points``.
"""

from __future__ import annotations

import http.client
import operator
import os
import random
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from collections.abc import Callable, Mapping
from typing import Any

from .errors import ApiError, DeskUnavailable
from .heartbeat import Heartbeat, detect_gpus
from .run import Run, run_path
from .wire import (
    MAX_PENDING_POINTS,
    NO_BODY,
    RETRY_STATUSES,
    RUN_KINDS,
    NoRedirect,
    Response,
    api_root,
    decode,
    dumps,
    in_flight,
    log,
    now_iso,
    retry_after,
)


def _raise_unless_retried(
    status: int,
    decoded: Any,
    reply_headers: Mapping[str, str],
    method: str,
    path: str,
    attempt: int,
    can_retry: bool,
) -> None:
    """An answer of 300 or more that is not worth retrying raises ``ApiError`` (a redirect
    names where it pointed: the client does not follow one); with retries spent, any raises
    ``DeskUnavailable``."""
    if status not in RETRY_STATUSES and not in_flight(status, decoded):
        if 300 <= status < 400 and "Location" in reply_headers:
            decoded = {"redirect": reply_headers["Location"], "body": decoded}
        raise ApiError(status, decoded, method, path)
    if not can_retry:
        raise DeskUnavailable(status, decoded, method, path, attempt + 1)


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
        self.root = api_root(url)
        self.scheme = scheme or ("Bearer" if key.startswith("cdk_") else "Token")
        self._authorization = f"{self.scheme} {key}"
        self.timeout = timeout
        self.max_retries = max_retries
        self.backoff = backoff
        self.max_backoff = max_backoff
        self.max_retry_after = max_retry_after
        self._sleep = sleep
        self._opener = urllib.request.build_opener(NoRedirect())

    def __repr__(self) -> str:
        return f"CampaignDesk({self.root!r}, scheme={self.scheme!r})"

    # -- low level ------------------------------------------------------------------------

    def request(
        self,
        method: str,
        path: str,
        body: Any = NO_BODY,
        *,
        idempotency_key: str | None = None,
        retry: bool = True,
        keyed: bool = True,
    ) -> Response:
        """Send one logical request, retried as the class docstring says; return the answer.

        ``path`` is relative to ``/api/v1`` (``"/runs/r1/"``). A POST gets a fresh uuid4
        ``Idempotency-Key`` unless one is given (or ``keyed=False``: a heartbeat); every retry
        reuses it, so the same request with the same key replays the stored answer. Raises
        ``ApiError`` (a 4xx/5xx not worth retrying), ``DeskUnavailable`` (retries spent)."""
        method = method.upper()
        if method == "POST" and idempotency_key is None and keyed:
            idempotency_key = str(uuid.uuid4())
        data = None if body is NO_BODY else dumps(body)
        url = self.root + "/" + path.lstrip("/")
        headers = self._headers(data is not None, idempotency_key)
        attempt = 0
        while True:
            can_retry = retry and attempt < self.max_retries
            try:
                status, reply_headers, raw = self._send(method, url, data, headers)
            except (OSError, http.client.HTTPException) as exc:
                if not can_retry:
                    raise DeskUnavailable(
                        None, f"{type(exc).__name__}: {exc}", method, path, attempt + 1
                    ) from exc
                delay = self._backoff_delay(attempt)
                log.warning("%s %s: %s; retrying in %.2f s", method, path, exc, delay)
            else:
                decoded = decode(raw, reply_headers.get("Content-Type", ""))
                if status < 300:
                    return Response(status, decoded, reply_headers, idempotency_key)
                _raise_unless_retried(
                    status, decoded, reply_headers, method, path, attempt, can_retry
                )
                delay = self._retry_delay(attempt, reply_headers)
                log.warning("%s %s answered %s; retrying in %.2f s", method, path, status, delay)
            self._sleep(delay)
            attempt += 1

    def _headers(self, has_body: bool, idempotency_key: str | None) -> dict[str, str]:
        headers = {
            "Authorization": self._authorization,
            "Accept": "application/json",
            "User-Agent": "campaign-desk-client/0.1",
        }
        if has_body:
            headers["Content-Type"] = "application/json"
        if idempotency_key is not None:
            headers["Idempotency-Key"] = idempotency_key
        return headers

    def _retry_delay(self, attempt: int, reply_headers: Mapping[str, str]) -> float:
        """The backoff, unless the server said when to come back (``Retry-After``, capped)."""
        delay = self._backoff_delay(attempt)
        wait = retry_after(reply_headers.get("Retry-After"))
        if wait is not None:
            # Jitter still: clients told the same Retry-After must not all return at once.
            delay = min(wait, self.max_retry_after) + random.uniform(0, self.backoff)
        return delay

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
        gpus: int | None = None,
        heartbeat_seconds: float = 30.0,
    ) -> Run:
        """Create run ``run_id`` in ``campaign`` (or take it up again) and return its ``Run``.

        Calling it again with the same ``run_id`` and ``config`` (a restarted job) answers the
        same run (one that ended ``failed`` goes on in a new segment); another ``config`` under
        the same id raises ``ApiError`` 409: a new configuration needs a new run id. A run the
        server has already stopped comes back with ``stopped`` True. Metric points are sent
        every ``flush_points`` points (at most 10,000) or at the first ``log`` after
        ``flush_seconds``, whichever comes first.

        The run's wall time is measured from now (sent as its start): a heartbeat thread posts
        every ``heartbeat_seconds`` (0: none) with ``gpus``, the GPUs it occupies (its cost is
        its hours × GPUs; default: ``detect_gpus()``, 1 without any), and finishing ends it.
        """
        if kind not in RUN_KINDS:
            raise ValueError(f"kind must be one of {', '.join(RUN_KINDS)}, not {kind!r}")
        gpus = detect_gpus() if gpus is None else operator.index(gpus)
        body: dict[str, Any] = {
            "run_id": run_id,
            "kind": kind,
            "config": dict(config or {}),
            "gpus": gpus,
            "started_at": now_iso(),
        }
        if variant is not None:
            body["variant"] = variant
        if heartbeat_seconds > 0:
            body["heartbeat_seconds"] = max(round(heartbeat_seconds), 1)
        answer = self.request("POST", f"/campaigns/{int(campaign)}/runs/", body)
        path = run_path(run_id, "heartbeat")

        def beat() -> Any:
            return self.request("POST", path, {"gpus": gpus}, retry=False, keyed=False)

        return Run(
            self,
            run_id,
            answer.body if isinstance(answer.body, dict) else {},
            created=answer.status == 201,
            flush_points=flush_points,
            flush_seconds=flush_seconds,
            max_pending_points=max_pending_points,
            spill_dir=spill_dir,
            heartbeat=Heartbeat(beat, heartbeat_seconds, run_id),
        )

    def get_run(self, run_id: str) -> dict[str, Any]:
        """The run as the server has it: status, stop (rule, reason, at), latest figures."""
        body = self.get(run_path(run_id))
        return body if isinstance(body, dict) else {}
