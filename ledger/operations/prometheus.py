"""GET /metrics: the service's own figures in Prometheus text format (README "Metrics").

Counted at scrape time, so that every gunicorn process and host answers the same numbers
without prometheus_client's multiprocess files: what the database holds (runs stopped by rule
kind, alert deliveries by channel and outcome, report build seconds), what Redis holds (the
Celery queue lengths, and the request and ingest counters that
`ledger.operations.middleware` adds as responses leave; `ledger.operations.counters`).

Access: `Authorization: Bearer <METRICS_TOKEN>`, or a client address inside
`METRICS_ALLOWED_NETWORKS` (CIDRs, comma-separated; REMOTE_ADDR as the WSGI server sees it:
behind a reverse proxy that is the proxy's, so prefer the token there). Neither set: 404.
"""

from __future__ import annotations

import hmac
import ipaddress
from collections.abc import Iterator
from datetime import timedelta

from django.conf import settings
from django.db.models import Count, DurationField, ExpressionWrapper, F, Q, Sum
from django.http import Http404, HttpRequest, HttpResponse
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)
from prometheus_client.exposition import CONTENT_TYPE_PLAIN_0_0_4
from prometheus_client.registry import Collector

from campaigns.models import Run, RunStatus
from ledger.models import Alert, AlertDelivery, Report, ReportStatus
from ledger.operations import counters

NS = "campaign_desk"
REPORT_BUCKETS = (0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0)


def _cache_metrics() -> Iterator[Metric]:
    wanted: list[tuple[str, ...]] = [
        ("http_requests", m, s) for m in counters.METHODS for s in counters.STATUS_CLASSES
    ]
    wanted += [("metric_batches_refused", r) for r in counters.REFUSAL_REASONS.values()]
    wanted += [("metric_points_ingested",), ("metric_batches_accepted",)]
    found = counters.read(wanted)
    requests = CounterMetricFamily(
        f"{NS}_http_requests", "Requests answered, by method and status class.",
        labels=["method", "status"],
    )  # fmt: skip
    refused = CounterMetricFamily(
        f"{NS}_metric_batches_refused", "Metric batches refused, by reason.", labels=["reason"]
    )
    for k, n in found.items():
        if k[0] == "http_requests":
            requests.add_metric(list(k[1:]), n)
        elif k[0] == "metric_batches_refused":
            refused.add_metric([k[1]], n)
    yield requests
    yield refused
    yield CounterMetricFamily(
        f"{NS}_metric_points_ingested", "Metric points accepted by the run-logging API.",
        value=found[("metric_points_ingested",)],
    )  # fmt: skip
    yield CounterMetricFamily(
        f"{NS}_metric_batches_accepted", "Metric batches accepted.",
        value=found[("metric_batches_accepted",)],
    )  # fmt: skip


def _database_metrics() -> Iterator[Metric]:
    stopped = CounterMetricFamily(
        f"{NS}_runs_stopped", "Runs stopped, by the kind of rule that stopped them "
        "(manual: by hand without a rule).", labels=["rule_kind"],
    )  # fmt: skip
    rows = (
        Run.objects.filter(status=RunStatus.STOPPED)
        .values("stop_rule__kind")
        .annotate(n=Count("id"))
        .order_by()
    )
    for row in rows:
        stopped.add_metric([row["stop_rule__kind"] or "manual"], row["n"])
    yield stopped
    # One outbox row per alert and channel (docs/domain.md §19.5): its state is the outcome.
    deliveries = CounterMetricFamily(
        f"{NS}_alert_deliveries", "Alert deliveries, by channel and outcome (outbox state).",
        labels=["channel", "outcome"],
    )  # fmt: skip
    outcomes = AlertDelivery.objects.values("channel", "state").annotate(n=Count("id")).order_by()
    for row in outcomes:
        deliveries.add_metric([row["channel"], row["state"]], row["n"])
    yield deliveries
    totals = Alert.objects.aggregate(open=Count("id", filter=Q(resolved_at__isnull=True)))
    yield GaugeMetricFamily(f"{NS}_alerts_open", "Alerts not resolved.", value=totals["open"])
    yield _report_seconds()


def _report_seconds() -> Metric:
    took = ExpressionWrapper(F("finished_at") - F("started_at"), output_field=DurationField())
    ready = Report.objects.filter(
        status=ReportStatus.READY, started_at__isnull=False, finished_at__isnull=False
    ).annotate(took=took)
    buckets = {
        f"le_{i}": Count("id", filter=Q(took__lte=timedelta(seconds=b)))
        for i, b in enumerate(REPORT_BUCKETS)
    }
    found = ready.aggregate(n=Count("id"), total=Sum("took"), **buckets)
    total = found["total"] or timedelta(0)
    pairs = [(str(b), found[f"le_{i}"]) for i, b in enumerate(REPORT_BUCKETS)]
    return HistogramMetricFamily(
        f"{NS}_report_build_seconds",
        "Seconds from a closing report's start to its end (ready reports).",
        buckets=[*pairs, ("+Inf", found["n"])],
        sum_value=total.total_seconds() if isinstance(total, timedelta) else float(total) / 1e6,
    )


def _queue_metrics() -> Iterator[Metric]:
    broker = getattr(settings, "CELERY_BROKER_URL", "") or ""
    queues = GaugeMetricFamily(
        f"{NS}_queue_length", "Messages waiting in each Celery queue (Redis LLEN).",
        labels=["queue"],
    )  # fmt: skip
    if broker.startswith(("redis://", "rediss://")):
        import redis

        client = redis.Redis.from_url(broker, socket_timeout=1, socket_connect_timeout=1)
        for name in getattr(settings, "METRICS_CELERY_QUEUES", ("celery",)):
            queues.add_metric([name], client.llen(name))
    yield queues


class DeskCollector(Collector):
    def collect(self) -> Iterator[Metric]:
        yield from _cache_metrics()
        yield from _database_metrics()
        up = GaugeMetricFamily(f"{NS}_broker_up", "1 when the Celery broker answered.")
        try:
            yield from list(_queue_metrics())
            up.add_metric([], 1)
        except Exception:  # an unreachable broker is a figure, not an error
            up.add_metric([], 0)
        yield up


def registry() -> CollectorRegistry:
    found = CollectorRegistry(auto_describe=False)
    found.register(DeskCollector())
    return found


def _allowed(request: HttpRequest) -> bool | None:
    """True/False for a configured check; None when nothing is configured (off)."""
    token = getattr(settings, "METRICS_TOKEN", "") or ""
    networks = getattr(settings, "METRICS_ALLOWED_NETWORKS", ()) or ()
    if not token and not networks:
        return None
    sent = request.headers.get("Authorization", "")
    if token and hmac.compare_digest(sent.encode(), f"Bearer {token}".encode()):
        return True
    try:
        address = ipaddress.ip_address(request.META.get("REMOTE_ADDR", ""))
    except ValueError:
        return False
    return any(address in ipaddress.ip_network(n, strict=False) for n in networks)


def metrics_view(request: HttpRequest) -> HttpResponse:
    """The text format 0.0.4, which every Prometheus server reads."""
    allowed = _allowed(request)
    if allowed is None:
        raise Http404("Metrics are off: set METRICS_TOKEN or METRICS_ALLOWED_NETWORKS.")
    if not allowed:
        response = HttpResponse("Unauthorized.\n", status=401, content_type="text/plain")
        response["WWW-Authenticate"] = 'Bearer realm="metrics"'
        return response
    if request.method != "GET":
        return HttpResponse(status=405, headers={"Allow": "GET"})
    return HttpResponse(generate_latest(registry()), content_type=CONTENT_TYPE_PLAIN_0_0_4)
