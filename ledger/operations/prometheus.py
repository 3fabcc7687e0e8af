"""GET /metrics: the service's own figures in Prometheus text format (README "Metrics").

Counters only go up: they are kept in Redis as events happen (`ledger.operations.counters`:
requests by method and status, request latency by route, metric batches and points, alert
delivery attempts by channel kind and outcome, runs stopped by rule kind), so every gunicorn
process and host answers the same numbers without prometheus_client's multiprocess files.
States are gauges, counted from the database at scrape time (runs by status, outbox rows by
kind and state, open alerts), and every Celery queue's depth from the broker, with
`broker_up` 0 when no broker is configured or it does not answer. Process metrics are the
answering process's (prometheus_client's process collector).

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
from prometheus_client import CollectorRegistry, ProcessCollector, generate_latest
from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)
from prometheus_client.exposition import CONTENT_TYPE_PLAIN_0_0_4
from prometheus_client.registry import Collector

from campaigns.domain.stop_rules import RULE_KINDS
from campaigns.models import Run
from ledger.models import Alert, AlertDelivery, ChannelKind, Report, ReportStatus
from ledger.operations import counters

NS = "campaign_desk"
REPORT_BUCKETS = (0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0)
OUTCOMES = ("sent", "failed", "refused", "gave_up")
STOP_KINDS = (*RULE_KINDS, "manual")


def _request_metrics(found: dict[tuple[str, ...], int]) -> Iterator[Metric]:
    requests = CounterMetricFamily(
        f"{NS}_http_requests", "Requests answered, by method and status class.",
        labels=["method", "status"],
    )  # fmt: skip
    for m in counters.METHODS:
        for s in counters.STATUS_CLASSES:
            requests.add_metric([m, s], found[("http_requests", m, s)])
    yield requests
    refused = CounterMetricFamily(
        f"{NS}_metric_batches_refused", "Metric batches refused, by reason.", labels=["reason"]
    )
    for reason in counters.REFUSAL_REASONS.values():
        refused.add_metric([reason], found[("metric_batches_refused", reason)])
    yield refused
    yield CounterMetricFamily(
        f"{NS}_metric_points_ingested", "Metric points accepted by the run-logging API.",
        value=found[("metric_points_ingested",)],
    )  # fmt: skip
    yield CounterMetricFamily(
        f"{NS}_metric_batches_accepted", "Metric batches accepted.",
        value=found[("metric_batches_accepted",)],
    )  # fmt: skip


def _event_metrics(found: dict[tuple[str, ...], int]) -> Iterator[Metric]:
    deliveries = CounterMetricFamily(
        f"{NS}_alert_deliveries", "Alert delivery attempts, by channel kind and outcome.",
        labels=["kind", "outcome"],
    )  # fmt: skip
    for kind in ChannelKind.values:
        for outcome in OUTCOMES:
            deliveries.add_metric([kind, outcome], found[("alert_deliveries", kind, outcome)])
    yield deliveries
    stopped = CounterMetricFamily(
        f"{NS}_runs_stopped", "Runs stopped, by the kind of rule that stopped them "
        "(manual: by hand without a rule).", labels=["rule_kind"],
    )  # fmt: skip
    for kind in STOP_KINDS:
        stopped.add_metric([kind], found[("runs_stopped", kind)])
    yield stopped


def _latency() -> Metric:
    series = counters.routes_seen()
    buckets = [str(b) for b in counters.LATENCY_BUCKETS]
    keys: list[tuple[str, ...]] = [
        ("request_seconds_bucket", s, b) for s in series for b in [*buckets, "inf"]
    ]
    keys += [
        (name, s) for s in series for name in ("request_seconds_count", "request_seconds_sum_us")
    ]
    found = counters.read(keys)
    histogram = HistogramMetricFamily(
        f"{NS}_http_request_duration_seconds",
        "Seconds from a request's arrival to its answer, by method and URL route.",
        labels=["method", "route"],
    )
    for one in series:
        running, pairs = 0, []
        for b in buckets:
            running += found[("request_seconds_bucket", one, b)]
            pairs.append((b, running))
        pairs.append(("+Inf", found[("request_seconds_count", one)]))
        total = found[("request_seconds_sum_us", one)] / 1e6
        histogram.add_metric(one.split("|", 1), pairs, sum_value=total)
    return histogram


def _cache_metrics() -> Iterator[Metric]:
    wanted: list[tuple[str, ...]] = [
        ("http_requests", m, s) for m in counters.METHODS for s in counters.STATUS_CLASSES
    ]
    wanted += [("metric_batches_refused", r) for r in counters.REFUSAL_REASONS.values()]
    wanted += [("metric_points_ingested",), ("metric_batches_accepted",)]
    wanted += [("alert_deliveries", k, o) for k in ChannelKind.values for o in OUTCOMES]
    wanted += [("runs_stopped", kind) for kind in STOP_KINDS]
    found = dict(counters.read(wanted))
    yield from _request_metrics(found)
    yield from _event_metrics(found)
    yield _latency()


def _database_metrics() -> Iterator[Metric]:
    runs = GaugeMetricFamily(f"{NS}_runs", "Runs, by status (now).", labels=["status"])
    for row in Run.objects.values("status").annotate(n=Count("id")).order_by("status"):
        runs.add_metric([row["status"]], row["n"])
    yield runs
    outbox = GaugeMetricFamily(
        f"{NS}_alert_outbox_rows", "Alert outbox rows, by channel kind and state (now).",
        labels=["kind", "state"],
    )  # fmt: skip
    rows = AlertDelivery.objects.values("kind", "state").annotate(n=Count("id")).order_by()
    for row in rows:
        outbox.add_metric([row["kind"], row["state"]], row["n"])
    yield outbox
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


def queue_names() -> list[str]:
    """Every queue tasks are routed to (settings.TASK_QUEUES), and any the operator adds."""
    names = list(getattr(settings, "TASK_QUEUES", {"default": "celery"}).values())
    names += list(getattr(settings, "METRICS_CELERY_QUEUES", ()))
    return sorted(set(names))


def _queue_metrics() -> tuple[Metric, int]:
    """The queues' depths, and 1 when the broker answered (0: none configured, or no answer)."""
    broker = getattr(settings, "CELERY_BROKER_URL", "") or ""
    queues = GaugeMetricFamily(
        f"{NS}_queue_length", "Messages waiting in each Celery queue (Redis LLEN).",
        labels=["queue"],
    )  # fmt: skip
    if not broker.startswith(("redis://", "rediss://")):
        return queues, 0
    import redis

    try:
        client = redis.Redis.from_url(broker, socket_timeout=1, socket_connect_timeout=1)
        depths = {name: int(client.llen(name)) for name in queue_names()}
    except Exception:  # an unreachable broker is a figure, not an error
        return queues, 0
    for name, depth in depths.items():
        queues.add_metric([name], depth)
    return queues, 1


class DeskCollector(Collector):
    def collect(self) -> Iterator[Metric]:
        yield from _cache_metrics()
        yield from _database_metrics()
        queues, up = _queue_metrics()
        yield queues
        yield GaugeMetricFamily(
            f"{NS}_broker_up", "1 when the Celery broker answered, 0 when none is configured "
            "or it did not.", value=up,
        )  # fmt: skip


def registry() -> CollectorRegistry:
    found = CollectorRegistry(auto_describe=False)
    found.register(DeskCollector())
    ProcessCollector(registry=found)  # process_cpu_seconds_total, resident memory, open fds
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
