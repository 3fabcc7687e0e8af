"""Counts requests and metric batches as they are answered (docs/operations: README
"Metrics"), so that the ingest path itself stays untouched: a batch's outcome is its status,
its accepted points are in its 201 body."""

from __future__ import annotations

import contextlib
import re
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
        response = self.get_response(request)
        # A counter never fails the request it counts.
        with contextlib.suppress(Exception):
            self.count(request, response)
        return response

    def count(self, request: HttpRequest, response: Any) -> None:
        if request.path == "/metrics":
            return
        method = request.method if request.method in counters.METHODS else "other"
        status = _status_class(response.status_code)
        counts: list[tuple[tuple[str, ...], int]] = [(("http_requests", method, status), 1)]
        if request.method == "POST" and INGEST_PATH.match(request.path):
            counts += _batch_counts(response)
        counters.add_many(counts)


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
