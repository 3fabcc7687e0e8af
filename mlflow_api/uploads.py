"""Guards for an artifact upload (issue 19; docs/domain.md §23), called by the artifact view.

- `refuse_before_reading`: a declared size over ARTIFACT_MAX_BYTES or over a quota is refused
  with 413 naming the limit, before a byte is read. A chunked body (no Content-Length: what
  MLflow's client sends for an **empty** file, whose length requests cannot tell) is taken,
  its size capped while it streams and checked against the quotas when recorded; a body with
  neither a length nor chunked framing is refused with 411, never stored empty.
- `body_stream`: the body as sent: Django's stream when a length was declared; a chunked body
  as the WSGI server gives it, decoded here when the server passes the framing through
  (Django's runserver and test server do, gunicorn decodes it itself).
- `deadline_stream`: the body must arrive within ARTIFACT_UPLOAD_SECONDS; past it the read
  raises `UploadTooSlow` and the caller deletes the partial file (as on any failure). The
  deadline holds inside a read, too: a client trickling bytes kept one read (and its thread)
  waiting for a whole chunk far past it, so under gunicorn a watchdog timer shuts the socket's
  reading side at the deadline, which ends the blocked read at once. Before the first byte is
  read the request gives its database connection back: a slow body holds a thread, never one
  of PostgreSQL's connections.
- `upload_slot`: at most ARTIFACT_UPLOADS_PER_KEY uploads at once per ingest key or user and
  ARTIFACT_UPLOADS_TOTAL across the web tier (counted in Redis when there is one); one more is
  refused with 429 (MLflow's client retries it), so slow uploads cannot take
  every thread the health probe and the API need.
- `quota_error`: the record-time quota refusal as MLflow's JSON error.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from django.conf import settings
from django.db import connection
from django.http import HttpRequest

from campaigns.models import Run
from campaigns.services.artifact_quota import ArtifactQuotaExceeded, check_artifact_quota
from mlflow_api.errors import MlflowError


class UploadTooSlow(Exception):
    pass


def quota_error(exc: ArtifactQuotaExceeded) -> MlflowError:
    return MlflowError("RESOURCE_EXHAUSTED", str(exc), status=413)


def _chunked(request: HttpRequest) -> bool:
    return "chunked" in request.META.get("HTTP_TRANSFER_ENCODING", "").lower()


def refuse_before_reading(request: HttpRequest, run: Run | None, path: str) -> int | None:
    """The declared size (None for a chunked body), once it is known to be allowed; raises
    MlflowError (411/413). `run` None: a logged model's own files (the caller checks)."""
    declared = request.META.get("CONTENT_LENGTH") or ""
    if not declared.strip().isdigit():
        if _chunked(request):
            return None
        raise MlflowError(
            "INVALID_PARAMETER_VALUE",
            "an artifact upload needs a Content-Length or a chunked body",
            status=411,
        )
    size = int(declared)
    if size > settings.ARTIFACT_MAX_BYTES:
        raise MlflowError(
            "RESOURCE_EXHAUSTED",
            f"an artifact holds at most {settings.ARTIFACT_MAX_BYTES} bytes (ARTIFACT_MAX_BYTES)",
            status=413,
        )
    if run is not None:
        try:
            check_artifact_quota(run, path=path, size_bytes=size)
        except ArtifactQuotaExceeded as exc:
            raise quota_error(exc) from exc
    return size


class _Chunks:
    """A chunked body decoded from the raw stream (RFC 9112 §7.1): size line, data, CRLF,
    ..., a zero size, trailer lines, CRLF. Read to its end, so a kept-alive connection's next
    request starts where it should."""

    def __init__(self, read: Any, readline: Any) -> None:
        self._read = read
        self._readline = readline
        self._left = 0
        self._done = False

    def _next_chunk(self) -> None:
        line = self._readline(1024)
        try:
            self._left = int(line.split(b";")[0].strip(), 16)
        except ValueError:
            raise MlflowError(
                "INVALID_PARAMETER_VALUE", "the chunked body is malformed", status=400
            ) from None
        if self._left == 0:
            self._done = True
            while self._readline(1024) not in (b"\r\n", b"\n", b""):
                pass  # trailer fields

    def read(self, size: int = -1) -> bytes:
        if not self._done and self._left == 0:
            self._next_chunk()
        if self._done:
            return b""
        want = self._left if size is None or size < 0 else min(size, self._left)
        data: bytes = self._read(want)
        if not data:
            raise MlflowError("INVALID_PARAMETER_VALUE", "the chunked body ended early")
        self._left -= len(data)
        if self._left == 0:
            self._readline(8)  # the chunk's CRLF
        return data


def body_stream(request: HttpRequest) -> Any:
    """What to read the body from (see the module's docstring)."""
    if not _chunked(request) or (request.META.get("CONTENT_LENGTH") or "").strip().isdigit():
        return request
    raw = request.META["wsgi.input"]
    if request.META.get("wsgi.input_terminated"):
        return raw  # the server decoded the framing: read to the end
    # Django's runserver hands on the socket behind a LimitedStream of the declared length
    # (none here), so read beneath it, framing and all.
    return _Chunks(getattr(raw, "_read", raw.read), getattr(raw, "_readline", raw.readline))


class _Deadline:
    """The request body, read before a deadline; `close()` (always) stops the watchdog."""

    def __init__(self, request: HttpRequest, seconds: float) -> None:
        # The body as sent (a chunked one decoded), read by the socket's deadline.
        self.stream, self.seconds = body_stream(request), seconds
        self.until = time.monotonic() + seconds
        self._lock = threading.Lock()
        self._done = self._cut = False
        sock = request.META.get("gunicorn.socket")
        self._timer = threading.Timer(seconds, self._stop_reading, [sock]) if sock else None
        if self._timer is not None:
            self._timer.daemon = True
            self._timer.start()

    def _stop_reading(self, sock: socket.socket) -> None:
        with self._lock:
            if self._done:  # the upload ended: the connection may serve another request
                return
            self._cut = True
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RD)  # the blocked read returns, short

    def read(self, size: int = -1) -> bytes:
        if self._cut or time.monotonic() > self.until:
            raise UploadTooSlow(f"the upload took longer than {self.seconds:g} s")
        data: bytes = self.stream.read(size)
        if self._cut:
            raise UploadTooSlow(f"the upload took longer than {self.seconds:g} s")
        return data

    def close(self) -> None:
        with self._lock:
            self._done = True
        if self._timer is not None:
            self._timer.cancel()


def deadline_stream(request: HttpRequest) -> _Deadline:
    """The body behind ARTIFACT_UPLOAD_SECONDS; the database connection is given back first
    (outside a transaction: the next query opens another)."""
    if not connection.in_atomic_block:
        connection.close()
    return _Deadline(request, float(settings.ARTIFACT_UPLOAD_SECONDS))


class UploadsBusy(MlflowError):
    def __init__(self, message: str) -> None:
        super().__init__("RESOURCE_EXHAUSTED", message, status=429)


_LOCAL: dict[str, set[str]] = {}
_LOCAL_LOCK = threading.Lock()


def _claim(scope: str, token: str, limit: int, lease: float) -> bool:
    """Add `token` to `scope`'s uploads if fewer than `limit` hold it (Redis: a sorted set by
    expiry, so a killed worker's claim lapses after `lease` s; else this process's set)."""
    client = upload_counter_client()
    if client is None:
        with _LOCAL_LOCK:
            held = _LOCAL.setdefault(scope, set())
            if len(held) >= limit:
                return False
            held.add(token)
            return True
    now = time.time()
    key = f"campaign-desk:uploads:{scope}"
    pipe = client.pipeline()
    pipe.zremrangebyscore(key, "-inf", now)
    pipe.zadd(key, {token: now + lease})
    pipe.zcard(key)
    pipe.expire(key, int(lease) + 60)
    if int(pipe.execute()[2]) <= limit:
        return True
    client.zrem(key, token)
    return False


def _release(scope: str, token: str) -> None:
    client = upload_counter_client()
    if client is None:
        with _LOCAL_LOCK:
            _LOCAL.get(scope, set()).discard(token)
        return
    client.zrem(f"campaign-desk:uploads:{scope}", token)


def upload_counter_client() -> Any:
    """The Redis client of the default cache, or None (the embedded shape: local memory)."""
    from django.core.cache import caches
    from django.core.cache.backends.redis import RedisCache

    from campaigns.redis_client import redis_client

    backend = caches["default"]
    return redis_client(backend) if isinstance(backend, RedisCache) else None


@contextmanager
def upload_slot(principal: str) -> Iterator[None]:
    """Hold one of `principal`'s upload slots and one of the web tier's; UploadsBusy (429)."""
    lease = float(settings.ARTIFACT_UPLOAD_SECONDS) + 60
    token = uuid.uuid4().hex
    limits = [
        (f"key:{principal}", settings.ARTIFACT_UPLOADS_PER_KEY, "for this key"),
        ("all", settings.ARTIFACT_UPLOADS_TOTAL, "on this service"),
    ]
    held: list[str] = []
    try:
        for scope, limit, where in limits:
            if not _claim(scope, token, int(limit), lease):
                raise UploadsBusy(f"{limit} artifact uploads are already under way {where}")
            held.append(scope)
        yield
    finally:
        for scope in held:
            _release(scope, token)
