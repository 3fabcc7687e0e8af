"""The wire: limits the server states, JSON bodies, Retry-After, and the redirect refusal
(a POST is never turned into a GET on another host)."""

from __future__ import annotations

import decimal
import email.utils
import json
import logging
import math
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Final

log = logging.getLogger("campaign_desk_client")


#: The server refuses (413) a metrics batch of more points than this.
MAX_POINTS_PER_REQUEST: Final = 10_000


#: Answers worth retrying: the server or a proxy in front of it is busy or restarting.
RETRY_STATUSES: Final = frozenset({429, 500, 502, 503, 504})


#: Points a Run keeps in memory, unsent, before it spills (or drops the oldest).
MAX_PENDING_POINTS: Final = 1_000_000


RUN_KINDS: Final = ("pilot", "full", "inference")


FINISH_STATUSES: Final = ("completed", "failed")


#: The most hours the server takes for a run (it rounds any number of hours to 0.01 h).
MAX_OBSERVED_HOURS: Final = 100_000


NO_BODY: Final = object()


@dataclass(frozen=True)
class Response:
    """A successful answer: status, decoded JSON body, headers, and the Idempotency-Key sent."""

    status: int
    body: Any
    headers: Mapping[str, str] = field(default_factory=dict)
    idempotency_key: str | None = None


class NoRedirect(urllib.request.HTTPRedirectHandler):
    """Never follow a redirect: urllib would turn a redirected POST into a GET without its body.
    The 3xx surfaces as an ApiError that names the new location instead."""

    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


def dumps(body: Any) -> bytes:
    # allow_nan (the default, spelled out): NaN, Infinity and -Infinity are written as the bare
    # tokens the server accepts; a diverging loss must reach the stop rules as it is.
    return json.dumps(body, allow_nan=True, separators=(",", ":")).encode()


def decode(raw: bytes, content_type: str) -> Any:
    if not raw:
        return None
    text = raw.decode("utf-8", errors="replace")
    if "json" in content_type or text[:1] in "{[":
        try:
            return json.loads(text)
        except ValueError:
            pass
    return text


def retry_after(value: str | None) -> float | None:
    """Seconds to wait from a Retry-After header: delta-seconds or an HTTP date."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def in_flight(status: int, body: Any) -> bool:
    """The server's 409 for a retry that arrived while the first attempt still runs."""
    detail = body.get("detail") if isinstance(body, Mapping) else None
    return status == 409 and isinstance(detail, str) and "still in progress" in detail


def api_root(url: str) -> str:
    root = url.rstrip("/")
    if not root.endswith("/api/v1"):
        root += "/api/v1"
    return root


def stop_fields(stop: Any) -> tuple[int | None, str, int | None, str | None]:
    """(rule id, reason, step, at) from the server's stop object, tolerant of its spelling."""
    if not isinstance(stop, Mapping):
        return None, str(stop or "stopped"), None, None
    rule = stop.get("rule", stop.get("rule_id"))
    if isinstance(rule, Mapping):
        rule = rule.get("id")
    step = stop.get("step")
    return (
        int(rule) if isinstance(rule, int | str) and str(rule).isdigit() else None,
        str(stop.get("reason") or "stopped"),
        int(step) if isinstance(step, int) else None,
        stop.get("at"),
    )


def metric_value(name: str, value: Any) -> float | str:
    if isinstance(value, bool):
        raise TypeError(f"metric {name!r}: a bool is not a measurement")
    if isinstance(value, str):
        if value.lower().lstrip("+-") not in {"nan", "inf", "infinity"}:
            raise TypeError(f"metric {name!r}: a string value must be NaN, Infinity or -Infinity")
        return value
    try:
        # float() also takes numpy scalars and one-element tensors (loss.item() is cheaper).
        return float(value)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"metric {name!r}: {value!r} is not a number") from exc


def hours_value(value: Any) -> float | str:
    """Observed hours as sent: a finite number from 0 to MAX_OBSERVED_HOURS (ValueError else).
    A Decimal goes as its decimal string, exactly; anything else as a JSON number."""
    if isinstance(value, bool):
        raise ValueError("observed_hours is a number of hours, not a bool")
    if isinstance(value, decimal.Decimal):
        if not value.is_finite() or not 0 <= value <= MAX_OBSERVED_HOURS:
            raise ValueError(f"observed_hours must be from 0 to {MAX_OBSERVED_HOURS}, not {value}")
        return f"{value.copy_abs():f}"  # "-0" would be refused; abs() would round to 28 digits
    try:
        hours = float(value)  # numpy scalars and tensors too
    except (TypeError, ValueError) as exc:
        raise ValueError(f"observed_hours must be a number, not {value!r}") from exc
    if not math.isfinite(hours) or not 0 <= hours <= MAX_OBSERVED_HOURS:
        raise ValueError(f"observed_hours must be from 0 to {MAX_OBSERVED_HOURS}, not {value!r}")
    return hours


def now_iso() -> str:
    """Now on this machine's clock, as the server reads a moment (ISO 8601, UTC offset)."""
    return datetime.now(UTC).isoformat()
