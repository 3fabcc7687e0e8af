"""GET /metrics: Prometheus text that prometheus_client's own parser and `promtool check metrics`
read, with the service's counters (which only go up), gauges for states, request latency by
route, every queue's depth and a truthful broker_up, behind a token or a network setting
(README "Metrics"); scraped from a live server too."""

from __future__ import annotations

import shutil
import subprocess
import urllib.request
from datetime import timedelta
from typing import Any

import pytest
from django.core.cache import caches
from django.core.cache.backends.redis import RedisCache
from django.test import TestCase, override_settings
from django.utils import timezone
from prometheus_client.parser import text_string_to_metric_families

from campaigns.models import Run, Team
from campaigns.tests.factories import as_user, committed_campaign, ingest_client, make_user
from ledger.models import Alert, AlertChannel, AlertDelivery, Report
from ledger.operations import counters
from ledger.services.alert_deliveries import record_outcome
from ledger.transports import Failed


def scrape(client, **headers) -> dict[tuple[str, tuple], float]:  # type: ignore[no-untyped-def]
    answer = client.get("/metrics", **headers)
    assert answer.status_code == 200, answer.content
    assert answer["Content-Type"].startswith("text/plain; version=0.0.4")
    samples = {}
    for family in text_string_to_metric_families(answer.content.decode()):
        for s in family.samples:
            samples[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return samples


TOKEN = {"HTTP_AUTHORIZATION": "Bearer s3cret"}


@override_settings(METRICS_TOKEN="s3cret", METRICS_ALLOWED_NETWORKS=())
class MetricsTests(TestCase):
    @classmethod
    def setUpTestData(cls) -> None:
        cls.team = Team.objects.create(name="ops")
        cls.planner = make_user("pia", team=cls.team)
        cls.campaign = committed_campaign(cls.team)

    def test_the_parser_reads_the_counters_where_the_events_happened(self) -> None:
        before = scrape(self.client, **TOKEN)
        with self.captureOnCommitCallbacks(execute=True):
            self.events()
        after = scrape(self.client, **TOKEN)

        def delta(name: str, **labels: str) -> float:
            k = (name, tuple(sorted(labels.items())))
            return after.get(k, 0) - before.get(k, 0)

        self.assertEqual(delta("campaign_desk_metric_points_ingested_total"), 6)
        self.assertEqual(delta("campaign_desk_metric_batches_accepted_total"), 2)
        self.assertEqual(
            delta("campaign_desk_metric_batches_refused_total", reason="run_stopped_or_closed"), 1
        )
        self.assertEqual(delta("campaign_desk_metric_batches_refused_total", reason="invalid"), 1)
        self.assertEqual(Run.objects.get(run_id="m-1").status, "stopped")
        self.assertEqual(delta("campaign_desk_runs_stopped_total", rule_kind="non_finite_loss"), 1)
        self.assertEqual(delta("campaign_desk_runs", status="stopped"), 1)
        self.assertEqual(delta("campaign_desk_alert_deliveries_total", kind="email",
                               outcome="sent"), 1)  # fmt: skip
        self.assertEqual(delta("campaign_desk_alert_deliveries_total", kind="slack",
                               outcome="failed"), 1)  # fmt: skip
        self.assertEqual(delta("campaign_desk_alert_outbox_rows", kind="slack", state="failed"), 1)
        self.assertEqual(delta("campaign_desk_report_build_seconds_count"), 1)
        self.assertEqual(delta("campaign_desk_report_build_seconds_bucket", le="2.0"), 0)
        self.assertEqual(delta("campaign_desk_report_build_seconds_bucket", le="5.0"), 1)
        self.assertAlmostEqual(delta("campaign_desk_report_build_seconds_sum"), 3.0)
        self.assertGreater(delta("campaign_desk_http_requests_total", method="POST",
                                 status="2xx"), 2)  # fmt: skip
        route = "/api/v1/runs/<run_id:run_id>/metrics/"
        self.assertEqual(delta("campaign_desk_http_request_duration_seconds_count",
                               method="POST", route=route), 4)  # fmt: skip
        self.assertFalse(any("m-1" in dict(labels).get("route", "") for _n, labels in after))
        # Deleting the rows the old counters were counted from takes nothing back.
        AlertDelivery.objects.all().delete()
        Run.objects.filter(run_id="m-1").update(status="completed")
        again = scrape(self.client, **TOKEN)
        for name, labels in [
            ("campaign_desk_alert_deliveries_total", (("kind", "email"), ("outcome", "sent"))),
            ("campaign_desk_runs_stopped_total", (("rule_kind", "non_finite_loss"),)),
        ]:
            self.assertEqual(again[(name, labels)], after[(name, labels)])
        self.assertIn(("process_cpu_seconds_total", ()), again)

    def test_broker_up_says_what_the_broker_did(self) -> None:
        from django.conf import settings

        configured = scrape(self.client, **TOKEN)
        self.assertEqual(
            configured[("campaign_desk_broker_up", ())], int(bool(settings.CELERY_BROKER_URL))
        )
        if settings.CELERY_BROKER_URL:
            # Every queue tasks are routed to has its depth, not only "celery".
            for queue in settings.TASK_QUEUES.values():
                self.assertIn(("campaign_desk_queue_length", (("queue", queue),)), configured)
        with override_settings(CELERY_BROKER_URL="redis://127.0.0.1:1/0"):  # nothing listens
            self.assertEqual(scrape(self.client, **TOKEN)[("campaign_desk_broker_up", ())], 0)
        with override_settings(CELERY_BROKER_URL=""):
            self.assertEqual(scrape(self.client, **TOKEN)[("campaign_desk_broker_up", ())], 0)

    def events(self) -> None:
        loop = ingest_client(self.campaign)
        opened = loop.post(f"/api/v1/campaigns/{self.campaign.pk}/runs/", {"run_id": "m-1"},
                           format="json")  # fmt: skip
        self.assertEqual(opened.status_code, 201)
        points = [{"name": "loss", "step": i, "value": 1.0} for i in range(5)]
        self.assertEqual(
            loop.post("/api/v1/runs/m-1/metrics/", {"points": points}, format="json").status_code,
            201,
        )
        nan = [{"name": "loss", "step": 9, "value": "NaN"}]
        loop.post("/api/v1/runs/m-1/metrics/", {"points": nan}, format="json")  # stops the run
        refused = loop.post("/api/v1/runs/m-1/metrics/", {"points": points}, format="json")
        self.assertEqual(refused.status_code, 409)
        bad = loop.post("/api/v1/runs/m-1/metrics/", {"points": "x"}, format="json")
        self.assertEqual(bad.status_code, 400)
        now = timezone.now()
        alert = Alert.objects.create(campaign=self.campaign, kind="budget", key="80", message="m")
        for kind, error in (("email", None), ("slack", Failed("the receiver answered 503", 503))):
            channel = AlertChannel.objects.create(team=self.team, kind=kind, target="")
            sending = AlertDelivery.objects.create(
                alert=alert, channel=channel, team=self.team, kind=kind, state="sending",
                attempts=1,
            )  # fmt: skip
            record_outcome(sending, error)
        Report.objects.create(campaign=self.campaign, status="ready", started_at=now,
                              finished_at=now + timedelta(seconds=3))  # fmt: skip

    def test_a_token_or_a_network_is_needed(self) -> None:
        self.assertEqual(self.client.get("/metrics").status_code, 401)
        wrong = self.client.get("/metrics", HTTP_AUTHORIZATION="Bearer nope")
        self.assertEqual(wrong.status_code, 401)
        self.assertEqual(wrong["WWW-Authenticate"], 'Bearer realm="metrics"')
        # A user's API token is not the metrics token.
        self.assertEqual(as_user(self.planner).get("/metrics").status_code, 401)
        with override_settings(METRICS_TOKEN="", METRICS_ALLOWED_NETWORKS=("10.0.0.0/8",)):
            self.assertEqual(self.client.get("/metrics", REMOTE_ADDR="10.1.2.3").status_code, 200)
            self.assertEqual(self.client.get("/metrics").status_code, 401)  # 127.0.0.1
        with override_settings(METRICS_TOKEN="", METRICS_ALLOWED_NETWORKS=()):
            self.assertEqual(self.client.get("/metrics").status_code, 404)


class TheCountersCostOneRedisClientNotOneARequest(TestCase):
    """Django's Redis cache builds a new redis-py client on every get_client() (~60 µs of CPU
    each, more than the INCRBY it is for); the counters and the throttle keep one per cache
    client (campaigns/redis_client.py) and send a request's counts in one pipeline."""

    @classmethod
    def setUpTestData(cls) -> None:
        cls.team = Team.objects.create(name="ops")
        cls.campaign = committed_campaign(cls.team)

    def test_ingest_batches_build_no_client_per_request_and_are_all_counted(self) -> None:
        backend = caches["default"]
        if not isinstance(backend, RedisCache):
            self.skipTest("the embedded shape counts in the local-memory cache")
        loop = ingest_client(self.campaign)
        loop.post(f"/api/v1/campaigns/{self.campaign.pk}/runs/", {"run_id": "r-1"}, format="json")
        before = counters.read([("metric_points_ingested",), ("metric_batches_accepted",)])
        cache_client = backend._cache  # type: ignore[attr-defined]
        built = []
        get_client = cache_client.get_client

        def counted(*args: object, **kwargs: object) -> object:
            built.append(args)
            return get_client(*args, **kwargs)

        cache_client.get_client = counted
        try:
            for batch in range(5):
                points = [{"name": "loss", "step": batch * 3 + i, "value": 1.0} for i in range(3)]
                answer = loop.post("/api/v1/runs/r-1/metrics/", {"points": points}, format="json")
                self.assertEqual(answer.status_code, 201, answer.content)
        finally:
            del cache_client.get_client
        # Counted and throttled five times (three counters and a throttle script a batch)
        # with at most the one client the first use keeps.
        self.assertLessEqual(len(built), 1)
        after = counters.read([("metric_points_ingested",), ("metric_batches_accepted",)])
        self.assertEqual(
            after[("metric_points_ingested",)] - before[("metric_points_ingested",)], 15
        )
        self.assertEqual(
            after[("metric_batches_accepted",)] - before[("metric_batches_accepted",)], 5
        )


@pytest.mark.django_db(transaction=True)
def test_a_live_server_answers_metrics_that_promtool_and_the_parser_accept(
    live_server: Any, settings: Any
) -> None:
    """Scraped over HTTP from a running server, as Prometheus does; `promtool check metrics`
    (Debian's prometheus package: `.ci/run` installs it) lints the text, and prometheus_client's
    parser reads it (where promtool is missing, only the parser: the promtool part is skipped)."""
    settings.METRICS_TOKEN = "s3cret"
    committed_campaign(Team.objects.create(name="live"))
    urllib.request.urlopen(f"{live_server.url}/api/v1/health/", timeout=30).read()
    request = urllib.request.Request(
        f"{live_server.url}/metrics", headers={"Authorization": "Bearer s3cret"}
    )
    with urllib.request.urlopen(request, timeout=30) as answer:
        assert answer.headers["Content-Type"].startswith("text/plain; version=0.0.4")
        text = answer.read().decode()
    names = {f.name for f in text_string_to_metric_families(text)}
    assert {
        "campaign_desk_http_request_duration_seconds", "campaign_desk_alert_deliveries",
        "campaign_desk_runs_stopped", "campaign_desk_runs", "campaign_desk_broker_up",
        "campaign_desk_queue_length", "process_cpu_seconds",
    } <= names  # fmt: skip
    assert 'route="/api/v1/health/"' in text
    promtool = shutil.which("promtool")
    if promtool is None:
        pytest.skip("promtool is not installed (apt-get install prometheus): parser checked only")
    checked = subprocess.run(
        [promtool, "check", "metrics"], input=text, capture_output=True, text=True, timeout=60
    )
    assert checked.returncode == 0 and checked.stdout.strip() == "", checked.stdout + checked.stderr
