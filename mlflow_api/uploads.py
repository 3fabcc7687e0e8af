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
  raises `UploadTooSlow` and the caller deletes the partial file (as on any failure).
- `quota_error`: the record-time quota refusal as MLflow's JSON error.
"""

from __future__ import annotations

import time
from typing import Any

from django.conf import settings
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
    def __init__(self, stream: Any, seconds: float) -> None:
        self.stream = stream
        self.until = time.monotonic() + seconds
        self.seconds = seconds

    def read(self, size: int = -1) -> bytes:
        if time.monotonic() > self.until:
            raise UploadTooSlow(f"the upload took longer than {self.seconds:g} s")
        data: bytes = self.stream.read(size)
        return data


def deadline_stream(stream: Any) -> Any:
    return _Deadline(stream, float(settings.ARTIFACT_UPLOAD_SECONDS))
