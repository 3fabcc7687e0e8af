"""Artifacts: one PUT per file into the run's storage (hashed and capped while streaming),
GET, and directory listings."""

from __future__ import annotations

import hashlib
import posixpath
import uuid
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.core.files import File
from django.core.files.storage import default_storage
from django.db import transaction
from django.db.models import QuerySet
from django.http import FileResponse, HttpRequest, HttpResponse, HttpResponseBase

from campaigns.models import Campaign, CampaignClosed, Run, RunArtifact
from campaigns.services import ingest
from campaigns.services.artifact_quota import ArtifactQuotaExceeded
from mlflow_api import services, uploads
from mlflow_api.auth import Caller
from mlflow_api.errors import MlflowError
from mlflow_api.models import LoggedModel, LoggedModelArtifact
from mlflow_api.views.lookups import campaign_of, run_not_found
from mlflow_api.views.wire import (
    ARTIFACT_CHUNK,
    answer,
    endpoint,
)


def _normal(path: str) -> str:
    """A path inside an artifact root as MLflow's client may write it (`.`, `dir/..`,
    `a//b`), normalised; "" is the root. Refused when it leaves the root."""
    clean = posixpath.normpath(path.strip("/")) if path.strip("/") else ""
    if clean == ".":
        return ""
    if clean == ".." or clean.startswith("../") or "\\" in clean:
        raise MlflowError("INVALID_PARAMETER_VALUE", f"artifact path {path!r} is not allowed")
    return clean


def _safe(path: str) -> str:
    clean = _normal(path)
    parts = clean.split("/") if clean else []
    if (
        not parts
        or len(clean) > 500
        # A file system's name limit is 255 bytes (not characters): past it the save fails.
        or any(len(p.encode("utf-8", "surrogatepass")) > 255 for p in parts)
    ):
        raise MlflowError("INVALID_PARAMETER_VALUE", f"artifact path {path!r} is not allowed")
    return clean


@dataclass(frozen=True)
class _Target:
    """Where a path's files are: a run's (`model` None) or a model's own (`run` None)."""

    run: Run | None
    model: LoggedModel | None
    path: str

    @property
    def team_id(self) -> int:
        if self.run is not None:
            return self.run.team_id
        assert self.model is not None
        return self.model.campaign.team_id


def _model_target(campaign: Campaign, model_id: str, rest: str) -> _Target | None:
    model = (
        LoggedModel.objects.filter(model_id=model_id, campaign=campaign)
        .select_related("source_run", "campaign")
        .first()
    )
    if model is None:
        return None
    if model.source_run is None:
        return _Target(None, model, _normal(rest))
    inner = _normal(rest)
    return _Target(
        model.source_run, None, f"models/{model.model_id}" + (f"/{inner}" if inner else "")
    )


def _artifact_target(caller: Caller, path: str) -> _Target:
    """`<experiment>/<run_id>/artifacts/<path>` → the run's file; a logged model's
    `<experiment>/models/<model_id>/artifacts/<path>` → its source run's
    `models/<id>/<path>`, or the model's own file when it has no source run."""
    parts = path.split("/")
    campaign = campaign_of(caller, parts[0] if parts else "")
    if len(parts) >= 4 and parts[1] == "models" and parts[3] == "artifacts":
        found = _model_target(campaign, parts[2], "/".join(parts[4:]))
        if found is not None:
            return found
    if len(parts) < 3 or parts[2] != "artifacts":
        raise MlflowError("RESOURCE_DOES_NOT_EXIST", f"no artifact root in {path!r}")
    run = caller.runs().filter(campaign=campaign, run_id=parts[1]).first()
    if run is None:
        raise run_not_found(parts[1])
    return _Target(run, None, _normal("/".join(parts[3:])))


def _stored(target: _Target) -> QuerySet[Any]:
    if target.run is not None:
        return RunArtifact.objects.filter(run=target.run)
    return LoggedModelArtifact.objects.filter(model=target.model)


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


def _download(stored: RunArtifact | LoggedModelArtifact) -> FileResponse:
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
    target = _artifact_target(caller, path)
    if request.method == "GET":
        stored = _stored(target).filter(path=target.path).first()
        if stored is None:
            raise MlflowError("RESOURCE_DOES_NOT_EXIST", f"no artifact {target.path!r}")
        return _download(stored)
    caller.require_write(target.team_id)
    relative = _safe(target.path)
    campaign = target.run.campaign if target.run is not None else target.model.campaign  # type: ignore[union-attr]
    try:
        # A closed campaign takes no files (INVALID_STATE), refused before a byte is read.
        campaign.refuse_if_closed()
    except CampaignClosed as exc:
        raise MlflowError("INVALID_STATE", str(exc)) from None
    # 411 without a length or chunked framing, 413 over ARTIFACT_MAX_BYTES or a quota.
    uploads.refuse_before_reading(request, target.run, relative)
    owner = f"{target.run.pk}" if target.run is not None else f"m{target.model.pk}"  # type: ignore[union-attr]
    # A fresh name per upload: the file it replaces is deleted only once the new row commits.
    name = f"mlflow-artifacts/{campaign.pk}/{owner}/{uuid.uuid4().hex}/" + posixpath.basename(
        relative
    )
    # A slot of the caller's and of the service's (429 past ARTIFACT_UPLOADS_PER_KEY/_TOTAL),
    # and the body behind its deadline, watched inside each read (mlflow_api/uploads.py).
    with uploads.upload_slot(caller.principal):
        saved, reader = _receive(request, name, relative)
    replaced = _record(target, relative, reader, saved, (request.content_type or "")[:200])
    if replaced:
        transaction.on_commit(lambda: default_storage.delete(replaced))
    return answer({})


def _record(
    target: _Target, relative: str, reader: _HashingReader, saved: str, content_type: str
) -> str | None:
    """Record the stored file; on any refusal the file is deleted. Returns the storage name
    of the file it replaced."""
    size, sha256 = reader.size, reader.sha256.hexdigest()
    try:
        if target.run is not None:
            return ingest.record_artifact(
                target.run,
                path=relative,
                size_bytes=size,
                sha256=sha256,
                storage_name=saved,
                content_type=content_type,
            )[1]
        assert target.model is not None
        return services.record_model_file(
            target.model,
            path=relative,
            size_bytes=size,
            sha256=sha256,
            storage_name=saved,
            content_type=content_type,
        )[1]
    except ArtifactQuotaExceeded as exc:
        default_storage.delete(saved)
        raise uploads.quota_error(exc) from None
    except ingest.RunRefused as exc:
        default_storage.delete(saved)  # closed while the file arrived
        raise MlflowError("INVALID_STATE", str(exc)) from None
    except Exception:
        default_storage.delete(saved)
        raise


@endpoint("GET")
def artifact_list(request: HttpRequest, caller: Caller) -> HttpResponse:
    """`?path=<experiment>/<run_id>/artifacts[/dir]` → the directory's entries."""
    path = (request.GET.get("path") or "").strip("/")
    target = _artifact_target(caller, path)
    prefix = f"{target.path}/" if target.path else ""
    entries: dict[str, dict[str, Any]] = {}
    for stored in _stored(target).filter(path__startswith=prefix):
        head, _, rest = stored.path[len(prefix) :].partition("/")
        if rest:
            entries.setdefault(head, {"path": head, "is_dir": True})
        else:
            entries[head] = {"path": head, "is_dir": False, "file_size": stored.size_bytes}
    return answer({"files": [entries[k] for k in sorted(entries)]})
