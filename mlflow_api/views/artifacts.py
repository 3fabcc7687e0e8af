"""Artifacts: one PUT per file into the run's storage (hashed and capped while streaming),
GET, and directory listings."""

from __future__ import annotations

import hashlib
import posixpath
import uuid
from typing import Any

from django.conf import settings
from django.core.files import File
from django.core.files.storage import default_storage
from django.db import transaction
from django.http import FileResponse, HttpRequest, HttpResponse, HttpResponseBase

from campaigns.models import (
    CampaignClosed,
    Run,
    RunArtifact,
)
from campaigns.services import ingest
from campaigns.services.artifact_quota import ArtifactQuotaExceeded
from mlflow_api import uploads
from mlflow_api.auth import Caller
from mlflow_api.errors import MlflowError
from mlflow_api.models import LoggedModel
from mlflow_api.views.lookups import (
    campaign_of,
)
from mlflow_api.views.wire import (
    ARTIFACT_CHUNK,
    answer,
    endpoint,
)


def _safe(path: str) -> str:
    clean = posixpath.normpath(path.strip("/")) if path.strip("/") else ""
    parts = clean.split("/") if clean else []
    if (
        not parts
        or any(p in ("", ".", "..") for p in parts)
        or "\\" in clean
        or "\x00" in clean
        or len(clean) > 500
        # A file system's name limit is 255 bytes (not characters): past it the save fails.
        or any(len(p.encode("utf-8", "surrogatepass")) > 255 for p in parts)
    ):
        raise MlflowError("INVALID_PARAMETER_VALUE", f"artifact path {path!r} is not allowed")
    return clean


def _artifact_target(caller: Caller, path: str) -> tuple[Run, str]:
    """`<experiment>/<run_id>/artifacts/<path>` → (run, path); a logged model's
    `<experiment>/models/<model_id>/artifacts/<path>` → (its source run, models/<id>/<path>)."""
    parts = path.split("/")
    campaign = campaign_of(caller, parts[0] if parts else "")
    if len(parts) >= 4 and parts[1] == "models" and parts[3] == "artifacts":
        model = LoggedModel.objects.filter(model_id=parts[2], campaign=campaign).first()
        if model is not None:
            if model.source_run is None:
                raise MlflowError(
                    "INVALID_PARAMETER_VALUE",
                    "a logged model without a source run has nowhere to keep its files",
                )
            rest = "/".join(parts[4:])
            return model.source_run, f"models/{model.model_id}" + (f"/{rest}" if rest else "")
    if len(parts) < 3 or parts[2] != "artifacts":
        raise MlflowError("RESOURCE_DOES_NOT_EXIST", f"no artifact root in {path!r}")
    run = caller.runs().filter(campaign=campaign, run_id=parts[1]).first()
    if run is None:
        raise MlflowError("RESOURCE_DOES_NOT_EXIST", f"run {parts[1]!r} not found")
    return run, "/".join(parts[3:])


class _TooLarge(Exception):
    pass


class _HashingReader:
    """Reads the request body for the storage, hashing and counting as it goes."""

    def __init__(self, stream: Any, limit: int) -> None:
        self.stream = stream
        self.limit = limit
        self.size = 0
        self.sha256 = hashlib.sha256()

    def read(self, size: int = -1) -> bytes:
        data: bytes = self.stream.read(size if size and size > 0 else ARTIFACT_CHUNK)
        self.size += len(data)
        if self.size > self.limit:
            raise _TooLarge
        self.sha256.update(data)
        return data


def _too_large() -> MlflowError:
    return MlflowError(
        "RESOURCE_EXHAUSTED",
        f"an artifact holds at most {settings.ARTIFACT_MAX_BYTES} bytes (ARTIFACT_MAX_BYTES)",
        status=413,
    )


def _download(stored: RunArtifact) -> FileResponse:
    """An artifact as a file to save, never a page: the uploader chose its bytes and its content
    type, so a browser opening the link must neither render nor sniff it (an HTML or SVG file
    would run its script on this site's origin), and if it did, the policy runs nothing."""
    response = FileResponse(
        default_storage.open(stored.storage_name, "rb"),
        as_attachment=True,
        filename=posixpath.basename(stored.path),
        content_type=stored.content_type or "application/octet-stream",
    )
    response["X-Content-Type-Options"] = "nosniff"
    response["Content-Security-Policy"] = "sandbox; default-src 'none'"
    return response


def _receive(request: HttpRequest, name: str, relative: str) -> tuple[str, _HashingReader]:
    """The body into storage as `name`: (the stored name, the reader with size and digest)."""
    body = uploads.deadline_stream(request)
    reader = _HashingReader(body, settings.ARTIFACT_MAX_BYTES)
    try:
        upload = File(reader, name=posixpath.basename(relative))  # type: ignore[arg-type]
        return default_storage.save(name, upload), reader
    except _TooLarge:
        default_storage.delete(name)
        raise _too_large() from None
    except BaseException as exc:
        # A client gone, too slow (ARTIFACT_UPLOAD_SECONDS) or a worker timeout: no partial file.
        default_storage.delete(name)
        if isinstance(exc, uploads.UploadTooSlow):
            raise MlflowError("INVALID_PARAMETER_VALUE", str(exc), status=408) from None
        raise
    finally:
        body.close()


@endpoint("GET", "PUT")
def artifact(request: HttpRequest, caller: Caller, path: str) -> HttpResponseBase:
    run, relative = _artifact_target(caller, path)
    if request.method == "GET":
        stored = RunArtifact.objects.filter(run=run, path=relative).first()
        if stored is None:
            raise MlflowError("RESOURCE_DOES_NOT_EXIST", f"no artifact {relative!r}")
        return _download(stored)
    caller.require_write(run.team_id)
    relative = _safe(relative)
    try:
        # A closed campaign takes no files (INVALID_STATE), refused before a byte is read.
        run.campaign.refuse_if_closed()
    except CampaignClosed as exc:
        raise MlflowError("INVALID_STATE", str(exc)) from None
    # 411 without Content-Length, 413 over ARTIFACT_MAX_BYTES or a quota (mlflow_api/uploads).
    uploads.refuse_before_reading(request, run, relative)
    # A fresh name per upload: the file it replaces is deleted only once the new row commits.
    name = f"mlflow-artifacts/{run.campaign_id}/{run.pk}/{uuid.uuid4().hex}/" + posixpath.basename(
        relative
    )
    # A slot of the caller's and of the service's (429 past ARTIFACT_UPLOADS_PER_KEY/_TOTAL),
    # and the body behind its deadline, watched inside each read (mlflow_api/uploads.py).
    with uploads.upload_slot(caller.principal):
        saved, reader = _receive(request, name, relative)
    try:
        _artifact, replaced = ingest.record_artifact(
            run,
            path=relative,
            size_bytes=reader.size,
            sha256=reader.sha256.hexdigest(),
            storage_name=saved,
            content_type=(request.content_type or "")[:200],
        )
    except ArtifactQuotaExceeded as exc:
        default_storage.delete(saved)
        raise uploads.quota_error(exc) from None
    except ingest.RunRefused as exc:
        default_storage.delete(saved)  # closed while the file arrived
        raise MlflowError("INVALID_STATE", str(exc)) from None
    except Exception:
        default_storage.delete(saved)
        raise
    if replaced:
        transaction.on_commit(lambda: default_storage.delete(replaced))
    return answer({})


@endpoint("GET")
def artifact_list(request: HttpRequest, caller: Caller) -> HttpResponse:
    """`?path=<experiment>/<run_id>/artifacts[/dir]` → the directory's entries."""
    path = (request.GET.get("path") or "").strip("/")
    run, relative = _artifact_target(caller, path)
    prefix = f"{relative.strip('/')}/" if relative.strip("/") else ""
    entries: dict[str, dict[str, Any]] = {}
    for stored in RunArtifact.objects.filter(run=run, path__startswith=prefix):
        head, _, rest = stored.path[len(prefix) :].partition("/")
        if rest:
            entries.setdefault(head, {"path": head, "is_dir": True})
        else:
            entries[head] = {"path": head, "is_dir": False, "file_size": stored.size_bytes}
    return answer({"files": [entries[k] for k in sorted(entries)]})
