"""Counters that every web process adds to: kept in the default cache (Redis when REDIS_URL or
a Redis broker is set: one count for all gunicorn workers and hosts; the local-memory cache in
the embedded one-process shape). Each label set is a fixed key, so a scrape reads them all in
one `get_many` without listing keys. A counter restarts from 0 when Redis is flushed: Prometheus
`rate()` handles a reset."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from django.core.cache import cache, caches
from django.core.cache.backends.redis import RedisCache

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


def key(name: str, *labels: str) -> str:
    return ":".join((PREFIX, name, *labels))


def add(name: str, *labels: str, by: int = 1) -> None:
    k = key(name, *labels)
    backend = caches["default"]  # the backend itself: `cache` is a proxy to it
    if isinstance(backend, RedisCache):
        # One round trip on every request: Redis's INCRBY starts a missing key at 0, and the
        # cache's serializer stores an int as itself, so get_many reads it back as one.
        # (cache.add + cache.incr were three: SET NX, EXISTS, INCRBY.)
        client = backend._cache.get_client(write=True)  # type: ignore[attr-defined]
        client.incrby(backend.make_and_validate_key(k), by)
        return
    cache.add(k, 0, timeout=None)
    try:
        cache.incr(k, by)
    except ValueError:  # evicted between add and incr (local-memory cache): start again
        cache.set(k, by, timeout=None)


def read(keys: Iterable[tuple[str, ...]]) -> Mapping[tuple[str, ...], int]:
    """The counts of these (name, *labels) tuples; 0 for one never added to."""
    wanted = list(keys)
    found = cache.get_many([key(*k) for k in wanted])
    return {k: int(found.get(key(*k)) or 0) for k in wanted}
