"""The default cache's Redis client, for the code that talks to Redis itself: the throttle's
Lua script (campaigns/api/throttles.py) and the operations counters (ledger/operations/).

Django's `RedisCacheClient.get_client()` builds a new `redis.Redis` on every call. Its
connection pool is kept, so nothing reconnects, but the object is not free: redis-py copies
its response-callback table into a case-insensitive dict each time, about 60 µs of CPU here,
more than the INCRBY round trip it is built for (about 35 µs), and a request used to build
three to five. One is kept per cache client instead: redis-py clients are thread-safe (each
command takes a pooled connection), and Django's `caches` gives each thread its own backend
and cache client anyway, so what is kept is per thread, with that backend's pool.
"""

from __future__ import annotations

from typing import Any

from django.core.cache.backends.redis import RedisCache

_KEPT = "_campaign_desk_redis"


def redis_client(backend: RedisCache) -> Any:
    """The write client of `backend` (its primary server), built once per cache client."""
    cache_client = backend._cache  # type: ignore[attr-defined]
    client = cache_client.__dict__.get(_KEPT)
    if client is None:
        client = cache_client.get_client(write=True)
        cache_client.__dict__[_KEPT] = client
    return client
