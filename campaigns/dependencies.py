"""The services a request needs (PostgreSQL, Redis for the throttle buckets and the queue) and
what the web tier says when one is down (README, Production notes).

A request that fails because the database, the cache or the broker is unreachable answers
**503 with `Retry-After`** (UNAVAILABLE_RETRY_AFTER seconds), never a 500: the client retries
it with the same Idempotency-Key (nothing was stored: the transaction did not commit). The
throttle fails *open* instead (campaigns/api/throttles.py): a Redis outage stops rate limiting
for its duration, with a log line, rather than stopping the API. `/api/v1/health/` checks each
dependency this installation is configured with.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from django.conf import settings
from django.db import InterfaceError, OperationalError, connection
from django.http import HttpResponse, JsonResponse

log = logging.getLogger(__name__)


def _unavailable_types() -> tuple[type[BaseException], ...]:
    found: list[type[BaseException]] = [OperationalError, InterfaceError]
    try:
        from redis.exceptions import ConnectionError as RedisConnectionError
        from redis.exceptions import TimeoutError as RedisTimeoutError

        found += [RedisConnectionError, RedisTimeoutError]
    except ImportError:  # pragma: no cover - redis is a dependency
        pass
    try:
        from kombu.exceptions import OperationalError as BrokerError

        found.append(BrokerError)
    except ImportError:  # pragma: no cover - kombu comes with Celery
        pass
    return tuple(found)


UNAVAILABLE: tuple[type[BaseException], ...] = _unavailable_types()


def is_unavailable(exc: BaseException | None) -> bool:
    """A dependency is down (or dropped the connection), as opposed to a bug: worth a retry."""
    seen = 0
    while exc is not None and seen < 5:
        if isinstance(exc, UNAVAILABLE):
            return True
        exc, seen = exc.__cause__ or exc.__context__, seen + 1
    return False


def retry_after() -> int:
    return int(getattr(settings, "UNAVAILABLE_RETRY_AFTER", 5))


def unavailable_response(api: bool) -> HttpResponse:
    """503 with Retry-After: JSON under /api/, plain text elsewhere."""
    detail = "A service this server needs is unavailable; retry after the given seconds."
    response: HttpResponse
    if api:
        response = JsonResponse({"detail": detail, "retry_after": retry_after()}, status=503)
    else:
        response = HttpResponse(detail, status=503, content_type="text/plain")
    response["Retry-After"] = str(retry_after())
    return response


def _timed(check: Any) -> dict[str, Any]:
    started = time.monotonic()
    try:
        check()
    except Exception as exc:
        return {"ok": False, "error": f"{type(exc).__name__}: {exc}"[:300]}
    return {"ok": True, "ms": round((time.monotonic() - started) * 1000, 1)}


def _database() -> None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")


def _cache() -> None:
    from django.core.cache import caches

    caches["default"].get("health-probe")


def _broker() -> None:
    from celery import current_app

    with current_app.connection_for_write() as conn:
        conn.ensure_connection(max_retries=1, timeout=2)


def check_all() -> dict[str, dict[str, Any]]:
    """Each dependency this installation uses: database always; the Redis cache and the broker
    when configured (the embedded shape has neither)."""
    checks: dict[str, Any] = {"database": _database}
    if getattr(settings, "REDIS_URL", ""):
        checks["cache"] = _cache
    if getattr(settings, "CELERY_BROKER_URL", "") and not settings.CELERY_TASK_ALWAYS_EAGER:
        checks["broker"] = _broker
    return {name: _timed(check) for name, check in checks.items()}
