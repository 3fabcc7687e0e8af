"""Dependencies failing under a real client loop (issue 19, High 3 and 4).

A Redis of the test's own (a redis-server started here on a free port, never the shared one)
holds the throttle buckets; it is killed and restarted while the shipped client logs points to
the live server, and PostgreSQL connections of the live server are terminated
(`pg_terminate_backend`, on this test's own database only) while it does. Every point is then
stored exactly once. The throttle fails open (a log line), a database outage answers 503 with
Retry-After, and the health endpoint says up/down to anyone and which dependency to staff.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from typing import Any
from unittest import mock

import pytest
from django.db import OperationalError, connection
from django.test import override_settings
from rest_framework.test import APIClient

from campaign_desk_client import CampaignDesk
from campaigns.models import MetricPoint, Run, Team
from campaigns.services.keys import issue_api_token, issue_ingest_key
from campaigns.services.plans import commit_plan
from campaigns.tests.factories import make_plannable, make_user


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class OwnRedis:
    """redis-server on a free loopback port, no persistence; stop() and start() at will."""

    def __init__(self) -> None:
        self.port = _free_port()
        self.dir = tempfile.mkdtemp()
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        self.proc = subprocess.Popen(
            [
                *("redis-server", "--port", str(self.port), "--bind", "127.0.0.1"),
                *("--save", "", "--appendonly", "no", "--dir", self.dir),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.port), 0.2).close()
                return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("redis-server did not start")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(5)

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"


@pytest.fixture
def own_redis() -> Iterator[OwnRedis]:
    if shutil.which("redis-server") is None:
        pytest.skip("redis-server is not installed")
    redis = OwnRedis()
    redis.start()
    try:
        yield redis
    finally:
        redis.stop()
        shutil.rmtree(redis.dir, ignore_errors=True)


def _cache_on(redis: OwnRedis) -> dict[str, Any]:
    return {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": redis.url,
            "OPTIONS": {"socket_connect_timeout": 0.5, "socket_timeout": 0.5},
        }
    }


@pytest.mark.django_db
def test_the_throttle_fails_open_with_a_log_line_while_redis_is_down(
    own_redis: OwnRedis, caplog: pytest.LogCaptureFixture
) -> None:
    team = Team.objects.create(name="nlp")
    api = APIClient()
    api.force_authenticate(make_user("pia", team=team))
    with override_settings(CACHES=_cache_on(own_redis), REDIS_URL=own_redis.url):
        assert api.get(f"/api/v1/teams/{team.pk}/").status_code == 200
        own_redis.stop()
        answer = api.get(f"/api/v1/teams/{team.pk}/")
    assert answer.status_code == 200  # the finding: 500 for every authenticated request
    assert "admitting requests uncounted" in caplog.text


@pytest.mark.django_db
def test_a_database_outage_answers_503_with_retry_after() -> None:
    team = Team.objects.create(name="nlp")
    api = APIClient(raise_request_exception=False)
    api.force_authenticate(make_user("pia", team=team))
    down = OperationalError("connection to server at 127.0.0.1 failed: Connection refused")
    with mock.patch("campaigns.api.teams.team_ids_for", side_effect=down):
        answer = api.get(f"/api/v1/teams/{team.pk}/")
    assert answer.status_code == 503
    assert answer["Retry-After"] == "5"
    assert answer.json()["retry_after"] == 5


@pytest.mark.django_db
def test_health_is_up_or_down_for_anyone_and_detailed_for_staff(own_redis: OwnRedis) -> None:
    staff = make_user("olga")
    token = issue_api_token(owner=staff)[1]
    with override_settings(CACHES=_cache_on(own_redis), REDIS_URL=own_redis.url):
        assert APIClient().get("/api/v1/health/").json() == {"status": "ok"}
        own_redis.stop()
        anonymous = APIClient().get("/api/v1/health/")
        detailed = APIClient().get("/api/v1/health/", HTTP_AUTHORIZATION=f"Token {token}")
    assert anonymous.status_code == 503 and anonymous.json() == {"status": "unavailable"}
    assert anonymous["Retry-After"]
    deps = detailed.json()["dependencies"]
    assert deps["database"]["ok"] is True and deps["cache"]["ok"] is False
    assert "Connection" in deps["cache"]["error"]


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_every_point_is_stored_once_through_a_redis_kill_and_dropped_database_connections(
    live_server: Any, own_redis: OwnRedis
) -> None:
    if connection.vendor != "postgresql":
        pytest.skip("needs PostgreSQL")
    team = Team.objects.create(name="nlp")
    owner = make_user("olga", team=team, role="owner")
    campaign = make_plannable(team)
    commit_plan(campaign=campaign, acting_user=owner)
    _, raw = issue_ingest_key(campaign=campaign, acting_user=owner)
    item = campaign.items.get(name="baseline")
    desk = CampaignDesk(live_server.url, raw, backoff=0.05, max_backoff=0.5, max_retries=40)
    steps, killed = 600, threading.Event()
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        test_pid = cursor.fetchone()[0]

    def terminate_backends() -> None:
        # The live server's connections to this test's own database, several times mid-loop
        # (not this test's, nor this thread's).
        try:
            for _ in range(6):
                time.sleep(0.4)
                with connection.cursor() as cursor:
                    cursor.execute(
                        "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                        "WHERE datname = current_database() AND pid <> pg_backend_pid() "
                        "AND pid <> %s",
                        [test_pid],
                    )
            killed.set()
        finally:
            connection.close()

    with override_settings(CACHES=_cache_on(own_redis), REDIS_URL=own_redis.url):
        run = desk.run(
            campaign=campaign.pk, run_id="r1", variant=item.pk, kind="pilot", flush_points=20
        )
        terminator = threading.Thread(target=terminate_backends)
        for step in range(steps):
            run.log(step, loss=1.0 / (step + 1), lr=1e-4)
            if step == 100:
                own_redis.stop()  # down for a third of the loop
            if step == 300:
                own_redis.start()
                terminator.start()
            time.sleep(0.004)
        terminator.join(30)
        run.flush()
    assert killed.is_set()
    assert run.pending_points == 0 and run.dropped_points == 0
    stored = MetricPoint.objects.filter(run=Run.objects.get(team=team, run_id="r1"))
    assert stored.count() == 2 * steps
    assert stored.values("key__name", "step").distinct().count() == 2 * steps


@pytest.mark.django_db
def test_a_database_error_is_up_or_down_for_anyone_and_its_text_only_for_staff() -> None:
    """Issue 19, Low: the health endpoint showed the database's error text (its host, its user)
    to anonymous callers. They get up or down only; a staff session sees which and why."""
    staff = make_user("olga")
    down = OperationalError('connection to server at "10.0.0.5", port 5432 failed: role "desk"')
    with mock.patch("campaigns.dependencies._database", side_effect=down):
        anonymous = APIClient().get("/api/v1/health/")
        detailed = APIClient()
        detailed.force_login(staff)
        details = detailed.get("/api/v1/health/")
    assert anonymous.status_code == 503
    assert anonymous.json() == {"status": "unavailable"}
    assert b"10.0.0.5" not in anonymous.content and b"desk" not in anonymous.content
    assert "10.0.0.5" in details.json()["dependencies"]["database"]["error"]
