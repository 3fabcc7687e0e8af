"""One transport module per channel kind (docs/domain.md §19.4), as healthchecks.io has one per
integration: `send(channel, notice)` delivers one alert to one channel or raises

- `Refused`: sending again would fail the same way (a 4xx, a refused address, no recipient,
  no secret): recorded, never retried;
- `Failed`: a later attempt may succeed (no answer, a 5xx, 408, 425, 429): retried with backoff.

Every URL goes through `campaigns.outbound` (the same address policy as at save: public
addresses only, pinned, no redirect, one deadline). Transports read; the delivery service
(`ledger.services.alert_deliveries`) records what happened.
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType

from django.conf import settings

from campaigns import outbound
from ledger.domain.alert_delivery import parse_retry_after, retryable
from ledger.domain.notices import Notice
from ledger.models import AlertChannel


class Refused(Exception):
    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class Failed(Exception):
    def __init__(
        self, message: str, status: int | None = None, retry_after: float | None = None
    ) -> None:
        super().__init__(message)
        self.status = status
        self.retry_after = retry_after


def post(url: str, body: bytes, headers: dict[str, str]) -> int:
    """POST through the one outbound sender; the receiver's 2xx status, or Refused / Failed."""
    deadline = float(getattr(settings, "ALERT_WEBHOOK_TIMEOUT", 10))
    headers = {"Content-Type": "application/json", "User-Agent": "campaign-desk-alerts", **headers}
    try:
        return outbound.post(url, body, headers, deadline=deadline).status
    except outbound.WebhookRefused as exc:
        raise Refused(f"the address is refused: {exc}") from exc
    except outbound.DeliveryFailed as exc:
        if retryable(exc.status):
            raise Failed(str(exc), exc.status, parse_retry_after(exc.retry_after)) from exc
        raise Refused(str(exc), exc.status) from exc


Sender = Callable[[AlertChannel, Notice], int | None]


def sender(kind: str) -> Sender:
    """The transport of a channel kind; Refused for a kind no module handles."""
    module = _modules().get(kind)
    if module is None:
        raise Refused(f"no transport for channel kind {kind!r}")
    send: Sender = module.send
    return send


def _modules() -> dict[str, ModuleType]:
    from ledger.transports import email, slack, teams, webhook

    return {"email": email, "webhook": webhook, "slack": slack, "teams": teams}
