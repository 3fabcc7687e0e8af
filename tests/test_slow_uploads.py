"""Slow artifact uploads cannot take the service down (issue 32, item 2), at a test's scale:
gunicorn as docker-compose runs it, on PostgreSQL, with Redis counting the upload slots.

Before: 100 trickling uploads with one ingest key held 95 of PostgreSQL's 100 connections and
left health unanswered for 60 s; the upload deadline never fired while bytes trickled (it was
checked between reads, and one read waited for a whole chunk). Now a request gives its
connection back before reading the body, uploads beyond ARTIFACT_UPLOADS_PER_KEY or
ARTIFACT_UPLOADS_TOTAL answer 429 at once, and the deadline cuts a trickling body mid-read."""

from __future__ import annotations

import contextlib
import http.client
import os
import signal
import socket
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.db import connection
from django.test import override_settings

from campaigns.models import RunArtifact, Team
from campaigns.services.artifact_files import sweep_orphan_files
from campaigns.services.keys import issue_ingest_key
from campaigns.services.plans import commit_plan
from campaigns.tests.factories import as_key, make_plannable, make_user
from conftest import _database_url_for_worker
from tests.live_gunicorn import compose_gunicorn, health, worker_pids

UPLOADS = 12  # against 3 slots a key, 4 in all
DEADLINE = 3


def _trickle(port: int, path: str, key: str, answers: list[tuple[int, float]]) -> None:
    """PUT a 100 kB body at one byte every 0.2 s (it would take 5.5 hours)."""
    started = time.monotonic()
    sock = socket.create_connection(("127.0.0.1", port), timeout=60)
    try:
        head = (
            f"PUT {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {key}\r\n"
            "Content-Type: application/octet-stream\r\nContent-Length: 100000\r\n\r\n"
        )
        sock.sendall(head.encode())
        sock.settimeout(0.2)
        while time.monotonic() - started < 30:
            try:
                status = sock.recv(64)
                if status:
                    answers.append((int(status.split()[1]), time.monotonic() - started))
                    return
            except TimeoutError:
                pass
            # The server may have stopped reading: its answer is on its way.
            with contextlib.suppress(OSError):
                sock.sendall(b"x")
        answers.append((0, time.monotonic() - started))
    finally:
        sock.close()


def _campaign_with_a_run() -> tuple[Any, str]:
    """A committed campaign with run r1, and an ingest key of it (the raw key)."""
    team = Team.objects.create(name="nlp")
    owner = make_user("olga", team=team, role="owner")
    campaign = make_plannable(team, acting_user=owner)
    commit_plan(campaign=campaign, acting_user=owner)
    raw = issue_ingest_key(campaign=campaign, acting_user=owner)[1]
    item = campaign.items.get(name="baseline")
    made = as_key(raw).post(
        f"/api/v1/campaigns/{campaign.pk}/runs/",
        {"run_id": "r1", "kind": "full", "config": {}, "variant": item.pk},
        format="json",
    )
    assert made.status_code == 201
    return campaign, raw


def _gunicorn_connections() -> int:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
            "AND pid <> pg_backend_pid()"
        )
        return int(cursor.fetchone()[0])


# A server under slow uploads is timed: it runs after the parallel part of the suite.
@pytest.mark.serial
@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_trickling_uploads_are_capped_cut_at_the_deadline_and_health_answers(
    tmp_path: Path,
) -> None:
    if not settings.REDIS_URL:
        pytest.skip("needs Redis: the upload slots are counted there across gunicorn workers")
    campaign, raw = _campaign_with_a_run()
    other_raw = issue_ingest_key(campaign=campaign, acting_user=campaign.created_by)[1]
    env = {
        "ARTIFACT_UPLOAD_SECONDS": str(DEADLINE),
        "ARTIFACT_UPLOADS_PER_KEY": "3",
        "ARTIFACT_UPLOADS_TOTAL": "4",
        "DB_POOL_MAX_SIZE": "3",
        "MEDIA_ROOT": str(tmp_path),
        "REDIS_URL": settings.REDIS_URL,
        "CACHE_KEY_PREFIX": f"slow-uploads-{time.monotonic_ns()}",
    }
    base = f"/mlflow/api/2.0/mlflow-artifacts/artifacts/{campaign.pk}/r1/artifacts"
    answers: list[tuple[int, float]] = []
    with compose_gunicorn(
        _database_url_for_worker(), "test-slow-uploads.log", env, workers="2", threads="8",
        worker_connections="8", graceful_timeout="5",
    ) as port:  # fmt: skip
        clients = [
            threading.Thread(
                target=_trickle,
                args=(port, f"{base}/f{n}.bin", raw if n % 2 else other_raw, answers),
            )
            for n in range(UPLOADS)
        ]
        for client in clients:
            client.start()
        time.sleep(1)
        probes = [_timed_health(port) for _ in range(5)]
        held = _gunicorn_connections()
        for client in clients:
            client.join(40)
    statuses = sorted(status for status, _ in answers)
    assert all(status == 200 and seconds < 5 for status, seconds in probes), probes
    assert held <= 2 * 3, held  # at most workers × DB_POOL_MAX_SIZE
    assert statuses.count(408) == 4, answers  # the admitted ones, cut at the deadline
    assert statuses.count(429) == UPLOADS - 4, answers  # the rest, refused at once
    assert all(seconds < DEADLINE + 3 for status, seconds in answers if status == 408), answers
    assert RunArtifact.objects.count() == 0
    assert _files(tmp_path) == []  # no partial file left


def _timed_health(port: int) -> tuple[int, float]:
    started = time.monotonic()
    try:
        status = health(port, 10)
    except (OSError, http.client.HTTPException):
        status = 0
    return status, time.monotonic() - started


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_worker_killed_mid_upload_leaves_a_file_the_sweep_deletes(tmp_path: Path) -> None:
    campaign, raw = _campaign_with_a_run()
    base = f"/mlflow/api/2.0/mlflow-artifacts/artifacts/{campaign.pk}/r1/artifacts"
    env = {"MEDIA_ROOT": str(tmp_path), "REDIS_URL": "", "CELERY_BROKER_URL": ""}
    with compose_gunicorn(
        _database_url_for_worker(), "test-orphan-upload.log", env, workers="1"
    ) as port:
        kept = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        kept.request("PUT", f"{base}/kept.txt", b"stored", {"Authorization": f"Bearer {raw}"})
        assert kept.getresponse().status == 200
        sock = socket.create_connection(("127.0.0.1", port), timeout=30)
        sock.sendall(
            f"PUT {base}/big.bin HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {raw}\r\n"
            "Content-Length: 10000000\r\n\r\n".encode()
            + b"x" * 200_000
        )
        deadline = time.monotonic() + 20
        while len(_files(tmp_path)) < 2 and time.monotonic() < deadline:
            time.sleep(0.1)  # the partial file appears beside the stored one
        for pid in worker_pids(port):
            os.kill(pid, signal.SIGKILL)
        sock.close()
    files = _files(tmp_path)
    assert len(files) == 2, files  # the stored artifact and the killed upload's orphan
    with override_settings(MEDIA_ROOT=tmp_path):
        assert sweep_orphan_files(older_than_seconds=3600) == 0  # too young to be sure
        assert sweep_orphan_files(older_than_seconds=0) == 1
    assert [p.name for p in _files(tmp_path)] == ["kept.txt"]
    assert RunArtifact.objects.get().path == "kept.txt"


def _files(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file()]
