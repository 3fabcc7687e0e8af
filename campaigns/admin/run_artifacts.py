"""The artifacts browser of the run page (docs/domain.md §23.4): the run's files as a tree of
folders with each file's size and SHA-256 (computed by the server as the file arrived), a
preview of text, JSON and images, and a download. Readers of the run's team only (else 404).
A preview never lets the file's own markup run: text and JSON are shown escaped, images are
served with their type fixed by their name and ``nosniff``, anything else (SVG included) is
only downloaded."""

from __future__ import annotations

import contextlib
import json
from typing import Any

from django.core.files.storage import default_storage
from django.http import FileResponse, Http404, HttpRequest, HttpResponseBase
from django.template.loader import render_to_string
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils.safestring import mark_safe

from campaigns.admin.tenancy import READERS, caller_has_role
from campaigns.domain import artifact_tree as artifacts
from campaigns.models import Run, RunArtifact


def artifacts_html(run: Run) -> str:
    """The run's files as a tree (one query)."""
    rows = list(
        RunArtifact.objects.filter(run=run)
        .order_by("path")
        .values_list("id", "path", "size_bytes", "sha256")
    )
    if not rows:
        return "no artifacts logged"
    root = artifacts.tree(artifacts.File(*row) for row in rows)
    context = {"root": root, "run": run, "count": len(rows)}
    return mark_safe(render_to_string("admin/campaigns/run/artifacts.html", context).strip())


def _artifact(model_admin: Any, request: HttpRequest, object_id: str, artifact_id: int) -> Any:
    run = model_admin.get_object(request, object_id)
    if run is None or not caller_has_role(request, run.team_id, READERS):
        raise Http404("No such run.")
    found = RunArtifact.objects.filter(run=run, pk=artifact_id).first()
    if found is None:
        raise Http404("No such artifact.")
    return run, found


def download_view(
    request: HttpRequest, object_id: str, artifact_id: int, model_admin: Any
) -> HttpResponseBase:
    _run, found = _artifact(model_admin, request, object_id, artifact_id)
    return _file(
        found,
        "application/octet-stream",
        as_attachment=True,
        filename=found.path.rsplit("/", 1)[-1],
    )


def image_view(
    request: HttpRequest, object_id: str, artifact_id: int, model_admin: Any
) -> HttpResponseBase:
    """An image inline, its type from its name (never the uploader's word, never sniffed)."""
    _run, found = _artifact(model_admin, request, object_id, artifact_id)
    kind = artifacts.image_type(found.path)
    if kind is None:
        raise Http404("Not an image the page shows.")
    response = _file(found, kind)
    response["Content-Security-Policy"] = "default-src 'none'"
    return response


def _file(found: RunArtifact, content_type: str, **download: Any) -> FileResponse:
    """The stored file with the type given (never sniffed by the browser)."""
    response = FileResponse(
        default_storage.open(found.storage_name, "rb"), content_type=content_type, **download
    )
    response["X-Content-Type-Options"] = "nosniff"
    return response


def preview_view(
    request: HttpRequest, object_id: str, artifact_id: int, model_admin: Any
) -> HttpResponseBase:
    run, found = _artifact(model_admin, request, object_id, artifact_id)
    kind = artifacts.preview_of(found.path)
    context: dict[str, Any] = {
        **model_admin.admin_site.each_context(request),
        "title": found.path,
        "opts": Run._meta,
        "run": run,
        "artifact": found,
        "kind": kind,
        "size": artifacts.size_in_words(found.size_bytes),
        "change_url": reverse("admin:campaigns_run_change", args=[run.pk]),
        "download_url": reverse("admin:campaigns_run_artifact_download", args=[run.pk, found.pk]),
        "image_url": reverse("admin:campaigns_run_artifact_image", args=[run.pk, found.pk]),
    }
    if kind in ("text", "json"):
        context["text"], context["cut"] = _text(found, kind)
    return TemplateResponse(request, "admin/campaigns/run/artifact_preview.html", context)


def _text(found: RunArtifact, kind: str) -> tuple[str, bool]:
    """The file's first PREVIEW_BYTES as text (a JSON file under PARSE_BYTES laid out)."""
    limit = artifacts.PARSE_BYTES if kind == "json" else artifacts.PREVIEW_BYTES
    with default_storage.open(found.storage_name, "rb") as stream:
        head = stream.read(limit + 1)
    text = head[:limit].decode("utf-8", errors="replace")
    if kind == "json" and len(head) <= limit:
        # JSON lines, or not JSON at all: shown as it is.
        with contextlib.suppress(ValueError):
            text = json.dumps(json.loads(text), indent=2, ensure_ascii=False)
    cut = len(head) > limit or len(text) > artifacts.PREVIEW_BYTES
    return text[: artifacts.PREVIEW_BYTES], cut
