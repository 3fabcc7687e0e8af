"""Guards for an artifact upload (issue 19; docs/domain.md §23), called by the artifact view.

- `refuse_before_reading`: a body without Content-Length (chunked) is refused with 411, never
  stored empty; a declared size over ARTIFACT_MAX_BYTES or over a quota is refused with 413
  naming the limit, before a byte is read.
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


def refuse_before_reading(request: HttpRequest, run: Run, path: str) -> int:
    """The declared size, once it is known to be allowed; raises MlflowError (411/413)."""
    declared = request.META.get("CONTENT_LENGTH") or ""
    if not declared.strip().isdigit():
        raise MlflowError(
            "INVALID_PARAMETER_VALUE",
            "an artifact upload needs a Content-Length (chunked bodies are not taken)",
            status=411,
        )
    size = int(declared)
    if size > settings.ARTIFACT_MAX_BYTES:
        raise MlflowError(
            "RESOURCE_EXHAUSTED",
            f"an artifact holds at most {settings.ARTIFACT_MAX_BYTES} bytes (ARTIFACT_MAX_BYTES)",
            status=413,
        )
    try:
        check_artifact_quota(run, path=path, size_bytes=size)
    except ArtifactQuotaExceeded as exc:
        raise quota_error(exc) from exc
    return size


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
