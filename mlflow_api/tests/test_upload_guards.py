"""Artifact uploads (issue 19, Medium 8 and 9; issue 34; docs/domain.md §23): a chunked body
(what MLflow's client sends for an empty file) is stored whether the server decoded its framing
or not; a body with neither a length nor chunked framing is refused with 411 and nothing
stored; quotas per run and per team refuse with 413 naming the limit; an upload past its
deadline leaves no partial file."""

from __future__ import annotations

import hashlib
import io
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.test import Client, override_settings

from campaigns.models import RunArtifact, Team
from campaigns.services.keys import issue_ingest_key
from campaigns.services.plans import commit_plan
from campaigns.tests.factories import as_key, make_plannable, make_user


@pytest.fixture
def media() -> Iterator[Path]:
    root = Path(tempfile.mkdtemp(prefix="cd-upload-"))
    with override_settings(MEDIA_ROOT=root):
        yield root
    shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def upload(media: Path) -> Any:
    team = Team.objects.create(name="nlp")
    owner = make_user("olga", team=team, role="owner")
    campaign = make_plannable(team)
    commit_plan(campaign=campaign, acting_user=owner)
    _, raw = issue_ingest_key(campaign=campaign, acting_user=owner)
    item = campaign.items.get(name="baseline")
    for run_id in ("r1", "r2"):
        made = as_key(raw).post(
            f"/api/v1/campaigns/{campaign.pk}/runs/",
            {"run_id": run_id, "kind": "full", "config": {}, "variant": item.pk},
            format="json",
        )
        assert made.status_code == 201, made.json()
    client = Client(HTTP_AUTHORIZATION=f"Bearer {raw}")

    def url(run_id: str, path: str) -> str:
        return f"/mlflow/api/2.0/mlflow-artifacts/artifacts/{campaign.pk}/{run_id}/artifacts/{path}"

    def put(run_id: str, path: str, body: bytes, content_type: str = "text/plain", **extra: Any):  # type: ignore[no-untyped-def]
        return client.generic("PUT", url(run_id, path), body, content_type=content_type, **extra)

    put.get = lambda run_id, path: client.get(url(run_id, path))  # type: ignore[attr-defined]
    return put


def _files(media: Path) -> list[Path]:
    return [p for p in media.rglob("*") if p.is_file()]


@pytest.mark.django_db
def test_a_body_without_a_length_or_chunked_framing_is_refused_and_nothing_is_stored(
    upload: Any, media: Path
) -> None:
    answer = upload("r1", "out.txt", b"", CONTENT_LENGTH="")
    assert answer.status_code == 411
    assert "Content-Length" in answer.json()["message"]
    assert RunArtifact.objects.count() == 0 and _files(media) == []


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("sent", "decoded_by_the_server", "kept"),
    [
        (b"0\r\n\r\n", False, b""),  # MLflow's client, an empty file, under runserver
        (b"5\r\nhello\r\n6;ext=1\r\n world\r\n0\r\nTrailer: x\r\n\r\n", False, b"hello world"),
        (b"hello world", True, b"hello world"),  # gunicorn hands on the decoded body
        (b"", True, b""),
    ],
)
def test_a_chunked_body_is_stored_as_sent(
    upload: Any, media: Path, sent: bytes, decoded_by_the_server: bool, kept: bytes
) -> None:
    answer = upload(
        "r1",
        "out.txt",
        b"",
        CONTENT_LENGTH="",
        HTTP_TRANSFER_ENCODING="chunked",
        **{"wsgi.input": io.BytesIO(sent), "wsgi.input_terminated": decoded_by_the_server},
    )
    assert answer.status_code == 200, answer.content
    stored = RunArtifact.objects.get(path="out.txt")
    assert (stored.size_bytes, stored.sha256) == (len(kept), hashlib.sha256(kept).hexdigest())
    assert b"".join(upload.get("r1", "out.txt").streaming_content) == kept


@pytest.mark.django_db
def test_a_malformed_chunked_body_is_refused_and_nothing_is_stored(
    upload: Any, media: Path
) -> None:
    answer = upload(
        "r1",
        "out.txt",
        b"",
        CONTENT_LENGTH="",
        HTTP_TRANSFER_ENCODING="chunked",
        **{"wsgi.input": io.BytesIO(b"zz\r\nhello\r\n")},
    )
    assert answer.status_code == 400
    assert "chunked" in answer.json()["message"]
    assert RunArtifact.objects.count() == 0 and _files(media) == []


@pytest.mark.django_db
@override_settings(ARTIFACT_MAX_FILES_PER_RUN=2)
def test_the_run_file_quota_refuses_with_413_naming_it_and_a_replacement_still_fits(
    upload: Any, media: Path
) -> None:
    assert upload("r1", "a.txt", b"a").status_code == 200
    assert upload("r1", "b.txt", b"b").status_code == 200
    refused = upload("r1", "c.txt", b"c")
    assert refused.status_code == 413
    assert "ARTIFACT_MAX_FILES_PER_RUN" in refused.json()["message"]
    assert upload("r1", "a.txt", b"again").status_code == 200  # same path: no new file
    assert upload("r2", "c.txt", b"c").status_code == 200  # another run has its own
    assert RunArtifact.objects.count() == 3  # (the replaced file goes once the row commits)


@pytest.mark.django_db
@override_settings(ARTIFACT_MAX_BYTES_PER_TEAM=10)
def test_the_team_byte_quota_counts_every_run(upload: Any, media: Path) -> None:
    assert upload("r1", "a.bin", b"x" * 6).status_code == 200
    refused = upload("r2", "b.bin", b"y" * 6)
    assert refused.status_code == 413
    body = refused.json()
    assert body["error_code"] == "RESOURCE_EXHAUSTED"
    assert "ARTIFACT_MAX_BYTES_PER_TEAM" in body["message"] and "10 bytes" in body["message"]
    assert len(_files(media)) == 1


@pytest.mark.django_db
@override_settings(ARTIFACT_UPLOAD_SECONDS=0)
def test_an_upload_past_its_deadline_leaves_no_partial_file(upload: Any, media: Path) -> None:
    answer = upload("r1", "slow.bin", b"z" * 1000)
    assert answer.status_code == 408
    assert RunArtifact.objects.count() == 0 and _files(media) == []


@pytest.mark.django_db
def test_a_download_is_an_attachment_that_is_not_sniffed_nor_run(upload: Any) -> None:
    """Issue 19, Low: artifacts were served inline with the uploader's content type, so an
    uploaded HTML page opened from its link ran its script on the site's origin."""
    page = b"<html><script>alert(document.cookie)</script></html>"
    assert upload("r1", "plots/report.html", page, content_type="text/html").status_code == 200
    answer = upload.get("r1", "plots/report.html")
    assert answer.status_code == 200
    assert b"".join(answer.streaming_content) == page  # the bytes as uploaded
    assert answer["Content-Disposition"] == 'attachment; filename="report.html"'
    assert answer["X-Content-Type-Options"] == "nosniff"
    assert answer["Content-Security-Policy"].startswith("sandbox")
