"""When a delivery is tried again (pure; docs/domain.md §19.5).

A delivery is retried only when a later attempt can succeed: no answer (a network error, the
deadline passed), a 5xx, `408 Request Timeout`, `425 Too Early` and `429 Too Many Requests`.
Any other answer outside 2xx (a 3xx: redirects are not followed; a 4xx: the receiver refuses
what we send, the channel was deleted, the URL is wrong) is a refusal, recorded and not retried:
sending the same request again would be refused again.

The wait before attempt n + 1 is `base × 2^(n − 1)` seconds (n ≥ 1 attempts made), capped at
`cap`, and never shorter than the receiver's `Retry-After` when it gave one (seconds).
"""

from __future__ import annotations

from typing import Final

RETRIED_STATUSES: Final = frozenset({408, 425, 429})


def retryable(status: int | None) -> bool:
    """Whether an attempt that ended with `status` (None: no answer) may succeed later."""
    if status is None:
        return True
    return status in RETRIED_STATUSES or 500 <= status < 600


def wait_seconds(
    attempts: int, *, base: float, cap: float = 6 * 3600, retry_after: float | None = None
) -> float:
    """Seconds before the next attempt, after `attempts` (≥ 1) attempts."""
    backoff = min(base * 2.0 ** max(attempts - 1, 0), cap)
    return max(backoff, min(retry_after, cap)) if retry_after is not None else backoff


def parse_retry_after(value: str | None) -> float | None:
    """A `Retry-After` of delta-seconds (the HTTP-date form is not used by chat webhooks)."""
    if value is None or not value.strip().isdigit():
        return None
    return float(value.strip())
