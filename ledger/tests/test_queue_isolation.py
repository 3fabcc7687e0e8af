"""A slow webhook receiver stalls nothing but its own deliveries (issue 19, 2b): real Celery
workers on Redis, one on the delivery queue and one on the others, as docker-compose runs them.

The finding: a receiver sending one byte every 5 s held each delivery 60 s (the timeout was per
read), two alerts occupied both worker processes, and a closing report went from 0.6 s to 53.5 s.
Here the receiver sends one byte every 2 s (27 bytes: 54 s a delivery without the deadline);
each delivery is cut at its 2 s deadline and the report and the forecast finish meanwhile.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from decimal import Decimal
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings

from campaigns.models import Team
from campaigns.tests.factories import as_user as client_for
from campaigns.tests.factories import committed_campaign, deliverable_body, make_user
from catalog.services import seed_catalog
from config.celery import app
from conftest import _database_url_for_worker, stop_worker, wait_for
from estimates.models import Estimate
from ledger.models import AlertChannel, AlertDelivery, Report
from ledger.services.alerts import scan_alerts

pytestmark = [pytest.mark.postgres, pytest.mark.celery_worker]

ROOT = Path(__file__).resolve().parents[2]


class Trickler(BaseHTTPRequestHandler):
    started: list[float] = []

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["Content-Length"]))
        type(self).started.append(time.monotonic())
        try:
            for byte in b"HTTP/1.1 204 No Content\r\n\r\n":
                self.wfile.write(bytes([byte]))
                self.wfile.flush()
                time.sleep(2)
        except OSError:
            pass  # the worker hung up at its deadline

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def trickler() -> Iterator[str]:
    Trickler.started = []
    server = ThreadingHTTPServer(("127.0.0.2", 0), Trickler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.2:{server.server_address[1]}/hook"
    finally:
        server.shutdown()
        server.server_close()


def start_queue_worker(kinds: str, env_extra: dict[str, str]) -> subprocess.Popen[bytes]:
    """`celery worker -Q <the queues of kinds> --concurrency=1` on the test database; returns
    once it answers. Kinds ("delivery,reports", "celery" the default) name this test process's
    queues: under pytest-xdist each test process has its own (conftest.py)."""
    names = {**settings.TASK_QUEUES, "celery": settings.TASK_QUEUES["default"]}
    queues = ",".join(names[kind] for kind in kinds.split(","))
    env = {**os.environ, "DATABASE_URL": _database_url_for_worker()}
    env.update({"CELERY_TASK_ALWAYS_EAGER": "0", **env_extra})
    hostname = f"{queues.replace(',', '-')}-{os.getpid()}-{time.monotonic_ns()}@localhost"
    log = Path(os.environ.get("CELERY_TEST_LOG", "/tmp/campaign-desk-test-worker.log"))
    proc = subprocess.Popen(
        [
            *(sys.executable, "-m", "celery", "-A", "config", "worker", "-Q", queues),
            *("--pool=prefork", "--concurrency=1", "--loglevel=info", f"--hostname={hostname}"),
            *("--without-gossip", "--without-mingle"),
        ],
        env=env,
        stdout=log.open("ab"),
        stderr=subprocess.STDOUT,
        cwd=ROOT,
        start_new_session=True,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"the worker exited early; see {log}")
        if app.control.ping(destination=[hostname], timeout=1.0):
            proc.hostname = hostname  # type: ignore[attr-defined]
            return proc
    proc.kill()
    raise RuntimeError(f"the worker did not answer within 60 s; see {log}")


def test_a_trickling_receiver_is_cut_at_its_deadline_and_reports_and_forecasts_finish(
    transactional_db: None, trickler: str
) -> None:
    seed_catalog()
    app.control.purge()
    hook_env = {
        "ALERT_WEBHOOK_TIMEOUT": "2",
        "ALERT_WEBHOOK_BACKOFF": "600",  # one attempt each within this test
        "WEBHOOK_ALLOW_HTTP": "1",
        "WEBHOOK_ALLOWED_NETWORKS": "127.0.0.2/32",
    }
    delivery = start_queue_worker("delivery", hook_env)
    others = start_queue_worker("reports,forecasts,celery", {})
    try:
        team = Team.objects.create(name="nlp")
        AlertChannel.objects.create(
            team=team, kind="webhook", target=trickler, secret="whsec_c2VjcmV0LWZvci10ZXN0cw=="
        )
        planner = make_user("pia", team=team)
        campaign = committed_campaign(team, budget=Decimal("40.00"))  # enqueues its forecast
        api = client_for(planner)
        posted = api.post(
            f"/api/v1/campaigns/{campaign.pk}/deliverables/", deliverable_body(), format="json"
        )
        assert posted.status_code == 201
        started = time.monotonic()
        assert len(scan_alerts(campaign=campaign)) == 2  # two deliveries: 108 s untouched
        wait_for(lambda: len(Trickler.started) >= 1, timeout=30)
        asked = time.monotonic()
        report = api.post(f"/api/v1/campaigns/{campaign.pk}/reports/", {}, format="json").json()
        ready = wait_for(
            lambda: Report.objects.filter(pk=report["id"], status="ready").first(), timeout=30
        )
        report_seconds = time.monotonic() - asked
        forecast = wait_for(
            lambda: Estimate.objects.filter(
                campaign=campaign, item__isnull=True, status="fresh"
            ).first(),
            timeout=30,
        )
        cut = wait_for(
            lambda: AlertDelivery.objects.filter(kind="webhook", state="failed").count() == 2,
            timeout=40,
        )
        delivery_seconds = time.monotonic() - started
    finally:
        stop_worker(delivery)
        stop_worker(others)
    assert ready.status == "ready" and forecast.status == "fresh" and cut
    # Each delivery was cut at its deadline: both, one after the other, in far less than one
    # undeadlined delivery (54 s).
    assert delivery_seconds < 20, delivery_seconds
    errors = AlertDelivery.objects.filter(kind="webhook").values_list("last_error", flat=True)
    assert all("deadline of 2 s" in e for e in errors), list(errors)
    assert report_seconds < 15, report_seconds
