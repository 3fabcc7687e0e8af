"""Request rates: one bucket per ingest key (a runaway training loop cannot starve its team's
other loops or people), one per user. Rates come from REST_FRAMEWORK DEFAULT_THROTTLE_RATES
("ingest_key", "user") and are read on every request so that settings overrides apply.

A rate "N/period" admits at most N requests in ANY period-long window (a sliding log, as DRF's
own throttle keeps), and the check-and-record is one atomic step: DRF's SimpleRateThrottle reads
the history, then writes it back, so concurrent requests all see room and all pass. With the
Redis cache (settings.CACHES, shared by every gunicorn worker and host) the step is one Lua
script on a sorted set, timed by the Redis server's clock; with the local-memory cache (one
process, the embedded shape) it runs under a process lock. `wait()` still feeds DRF's
Retry-After header: the seconds until the oldest counted request leaves the window.

When Redis is unreachable the throttle fails OPEN (the request is admitted uncounted, with a
warning in the log at most every 10 s): a cache outage pauses rate limiting, never the API.
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from typing import Any

from django.core.cache import caches
from django.core.cache.backends.redis import RedisCache
from redis.exceptions import RedisError
from rest_framework.settings import api_settings
from rest_framework.throttling import SimpleRateThrottle

from campaigns.api.authentication import is_ingest
from campaigns.redis_client import redis_client

# KEYS[1]: the bucket (a sorted set of request ids scored by arrival, in milliseconds).
# ARGV: limit, window in ms, a unique id for this request. Returns {1, 0} when admitted, else
# {0, ms until the oldest counted request leaves the window}. Milliseconds keep every score
# below 2^53 and printable by Lua's %.14g without loss.
_SLIDING_LOG = """
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
if redis.call('ZCARD', KEYS[1]) < limit then
  redis.call('ZADD', KEYS[1], now, ARGV[3])
  redis.call('PEXPIRE', KEYS[1], window)
  return {1, 0}
end
local oldest = tonumber(redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')[2])
return {0, oldest + window - now}
"""

_local_lock = threading.Lock()
log = logging.getLogger(__name__)


def take(key: str, limit: int, window_seconds: int) -> float | None:
    """Count one request in bucket `key` if fewer than `limit` were counted in the last
    `window_seconds`; returns None when admitted, else the seconds to wait before a retry."""
    if limit <= 0:
        return float(window_seconds)
    backend = caches["default"]
    if isinstance(backend, RedisCache):
        try:
            return _take_redis(backend, key, limit, window_seconds)
        except (RedisError, OSError) as exc:
            # Fails OPEN, by choice: while Redis is down the request is admitted uncounted (a
            # warning at most every 10 s), so a cache outage never stops the API. The database
            # still bounds the work; the limit returns with Redis.
            _warn_open(exc)
            return None
    return _take_locked(backend, key, limit, window_seconds)


_last_warning = [0.0]


def _warn_open(exc: BaseException) -> None:
    now = time.monotonic()
    if now - _last_warning[0] >= 10:
        _last_warning[0] = now
        log.warning("throttle: Redis unavailable (%s); admitting requests uncounted", exc)


def _take_redis(backend: Any, key: str, limit: int, window_seconds: int) -> float | None:
    redis_key = backend.make_and_validate_key(key)
    client = redis_client(backend)
    script = client.register_script(_SLIDING_LOG)
    admitted, wait_ms = script(
        keys=[redis_key], args=[limit, window_seconds * 1000, uuid.uuid4().hex]
    )
    return None if int(admitted) == 1 else max(int(wait_ms), 0) / 1000


def _take_locked(backend: Any, key: str, limit: int, window_seconds: int) -> float | None:
    # The local-memory cache belongs to this process, so a process lock makes read-then-write
    # atomic; other non-Redis backends are counted per process only (not a deployed shape).
    with _local_lock:
        now = time.time()
        history = [t for t in backend.get(key, []) if t > now - window_seconds]
        if len(history) >= limit:
            return max(float(history[0]) + window_seconds - now, 0.0)
        history.append(now)
        backend.set(key, history, window_seconds)
        return None


class _AtomicRate(SimpleRateThrottle):
    _wait: float | None = None

    def get_rate(self) -> str | None:
        rate = api_settings.DEFAULT_THROTTLE_RATES.get(self.scope or "")
        return None if rate is None else str(rate)

    def allow_request(self, request: Any, view: Any) -> bool:
        if self.rate is None:
            return True
        self.key = self.get_cache_key(request, view)
        if self.key is None:
            return True
        limit, window = self.parse_rate(self.rate)
        assert limit is not None and window is not None
        self._wait = take(self.key, limit, window)
        return self._wait is None

    def wait(self) -> float | None:
        return self._wait


class IngestKeyThrottle(_AtomicRate):
    scope = "ingest_key"

    def get_cache_key(self, request: Any, view: Any) -> str | None:
        if not is_ingest(request.user):
            return None
        return self.cache_format % {"scope": self.scope, "ident": request.user.key.pk}


class UserThrottle(_AtomicRate):
    """DRF's UserRateThrottle, minus ingest keys (they have their own bucket above)."""

    scope = "user"

    def get_cache_key(self, request: Any, view: Any) -> str | None:
        user = request.user
        if is_ingest(user) or not (user and user.is_authenticated):
            return None
        return self.cache_format % {"scope": self.scope, "ident": user.pk}


def rate_limit_wait(
    *, ingest_key_id: int | None = None, user_id: int | None = None
) -> float | None:
    """The API's throttle for callers outside DRF (the MLflow facade, /mlflow/): the same
    buckets, the same setting names (DEFAULT_THROTTLE_RATES "ingest_key", "user") and the
    same atomic count, so one key gets one budget across /api/v1/ and /mlflow/. None when
    admitted, else the seconds to wait (answer 429 with that Retry-After)."""
    scope, ident = ("ingest_key", ingest_key_id) if ingest_key_id is not None else ("user", user_id)
    if ident is None:
        return None
    rate = api_settings.DEFAULT_THROTTLE_RATES.get(scope)
    if rate is None:
        return None
    limit, window = SimpleRateThrottle.parse_rate(None, str(rate))  # type: ignore[arg-type]
    assert limit is not None and window is not None
    return take(SimpleRateThrottle.cache_format % {"scope": scope, "ident": ident}, limit, window)
