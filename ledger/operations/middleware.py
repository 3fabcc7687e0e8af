"""Counts requests, their latency by route and metric batches as they are answered (README
"Metrics"), so that the ingest path itself stays untouched: a batch's outcome is its status,
its accepted points are in its 201 body. A request's route is the URL pattern Django resolved
(`/api/v1/runs/<str:run_id>/metrics/`), never the path the client sent, so the series are the
project's routes however many ids or bad paths are requested ("unmatched" for a 404 no route
took)."""

from __future__ import annotations

import contextlib
import re
import time
from collections.abc import Callable
from typing import Any

import orjson
from django.http import HttpRequest, HttpResponse

from ledger.operations import counters

INGEST_PATH = re.compile(r"^/api/v1/runs/[^/]+/metrics/?$")


def _status_class(status: int) -> str:
    return f"{min(max(status // 100, 2), 5)}xx"


class CountingMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        started = time.perf_counter()
        response = self.get_response(request)
        # A counter never fails the request it counts.
        with contextlib.suppress(Exception):
            self.count(request, response, time.perf_counter() - started)
        return response

    def count(self, request: HttpRequest, response: Any, seconds: float) -> None:
        if request.path == "/metrics":
            return
        method = request.method if request.method in counters.METHODS else "other"
        status = _status_class(response.status_code)
        match = getattr(request, "resolver_match", None)
        route = "/" + match.route if match is not None and match.route else "unmatched"
        counts: list[tuple[tuple[str, ...], int]] = [(("http_requests", method, status), 1)]
        counts += counters.latency_counts(method, route, seconds)
        if request.method == "POST" and INGEST_PATH.match(request.path):
            counts += _batch_counts(response)
        counters.add_many(counts, series=f"{method}|{route}")


def _batch_counts(response: Any) -> list[tuple[tuple[str, ...], int]]:
    """What a metric batch's answer adds to the counters: accepted (and its points) or refused
    (by reason)."""
    if response.status_code == 201 and not getattr(response, "streaming", False):
        accepted = int(orjson.loads(response.content).get("accepted", 0))
        counts: list[tuple[tuple[str, ...], int]] = [(("metric_batches_accepted",), 1)]
        return [*counts, (("metric_points_ingested",), accepted)] if accepted else counts
    if response.status_code in counters.REFUSAL_REASONS:
        return [(("metric_batches_refused", counters.REFUSAL_REASONS[response.status_code]), 1)]
    return []
