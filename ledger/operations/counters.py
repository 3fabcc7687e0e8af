"""Counters that every web process adds to: kept in the default cache (Redis when REDIS_URL or
a Redis broker is set: one count for all gunicorn workers and hosts; the local-memory cache in
the embedded one-process shape). Each label set is a fixed key, so a scrape reads them all in
one `get_many` without listing keys. A counter restarts from 0 when Redis is flushed: Prometheus
`rate()` handles a reset."""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Mapping

from django.core.cache import cache, caches
from django.core.cache.backends.redis import RedisCache
from django.db import transaction

from campaigns.redis_client import redis_client

PREFIX = "ops-metrics"
# The refusal reasons of a metric batch, by the status the API answers (docs/api.md).
REFUSAL_REASONS = {
    400: "invalid",
    401: "unauthenticated",
    403: "forbidden",
    404: "unknown_run",
    409: "run_stopped_or_closed",
    413: "too_large",
    415: "media_type",
    429: "throttled",
}
METHODS = ("GET", "POST", "PATCH", "PUT", "DELETE", "other")
STATUS_CLASSES = ("2xx", "3xx", "4xx", "5xx")
_ROUTES: set[str] = set()  # the local-memory shape's latency series seen (one process)


def key(name: str, *labels: str) -> str:
    return ":".join((PREFIX, name, *labels))


def add_many(counts: Iterable[tuple[tuple[str, ...], int]], series: str = "") -> None:
    """Add each `by` to its (name, *labels) counter: what one request counts, sent together;
    `series` ("METHOD|route") is remembered for the latency histogram's scrape."""
    counts = list(counts)
    if not counts:
        return
    backend = caches["default"]  # the backend itself: `cache` is a proxy to it
    if isinstance(backend, RedisCache):
        # One round trip for the request's counts (a pipeline, not a transaction: each INCRBY
        # is atomic by itself). INCRBY starts a missing key at 0, and the cache's serializer
        # stores an int as itself, so get_many reads it back as one.
        pipe = redis_client(backend).pipeline(transaction=False)
        for labels, by in counts:
            pipe.incrby(backend.make_and_validate_key(key(*labels)), by)
        if series:
            pipe.sadd(backend.make_and_validate_key(key("routes")), series)
        pipe.execute()
        return
    if series:
        _ROUTES.add(series)
    for labels, by in counts:
        k = key(*labels)
        cache.add(k, 0, timeout=None)
        try:
            cache.incr(k, by)
        except ValueError:  # evicted between add and incr (local-memory cache): start again
            cache.set(k, by, timeout=None)


def add_after_commit(counts: list[tuple[tuple[str, ...], int]]) -> None:
    """Count once the caller's transaction commits (a rolled-back event counts nothing); a
    counter never fails the caller."""

    def add() -> None:
        with contextlib.suppress(Exception):
            add_many(counts)

    transaction.on_commit(add)


def read(keys: Iterable[tuple[str, ...]]) -> Mapping[tuple[str, ...], int]:
    """The counts of these (name, *labels) tuples; 0 for one never added to."""
    wanted = list(keys)
    found = cache.get_many([key(*k) for k in wanted])
    return {k: int(found.get(key(*k)) or 0) for k in wanted}


# --- Request latency by route (a histogram kept as counters) --------------------------------

# Seconds; the usual Prometheus client buckets, which bracket an API call and an admin page.
LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)


def latency_counts(method: str, route: str, seconds: float) -> list[tuple[tuple[str, ...], int]]:
    """What one answered request adds: its bucket (the first upper bound it fits under, `inf`
    past the last), its count and its microseconds."""
    bucket = next((str(b) for b in LATENCY_BUCKETS if seconds <= b), "inf")
    series = f"{method}|{route}"
    return [
        (("request_seconds_bucket", series, bucket), 1),
        (("request_seconds_count", series), 1),
        (("request_seconds_sum_us", series), int(seconds * 1e6)),
    ]


def routes_seen() -> list[str]:
    backend = caches["default"]
    if isinstance(backend, RedisCache):
        found = redis_client(backend).smembers(backend.make_and_validate_key(key("routes")))
        return sorted(s.decode() if isinstance(s, bytes) else str(s) for s in found)
    return sorted(_ROUTES)
