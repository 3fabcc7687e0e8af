"""Outbound HTTP to an address a team chose: the alert webhook (docs/domain.md §19).

No well-kept library does this for the standard library or requests today (`advocate` was last
released in 2020 for requests 2.x; the httpx ones are young), so it is written here, small, on
`http.client`:

- the URL is judged by `campaigns.domain.webhook_targets` (https only unless
  WEBHOOK_ALLOW_HTTP; no local names);
- the host is resolved once, at delivery time, and *every* address it resolves to must be
  global (WEBHOOK_ALLOWED_NETWORKS lists the operator's exceptions);
- the connection goes to the checked address (no second lookup a rebinding DNS could answer
  differently), with the name sent as Host and as the TLS server name (certificates are
  verified against it);
- redirects are never followed (a 3xx is a failed delivery);
- one deadline bounds the whole exchange, connect to status line: a watchdog shuts the socket
  down when it passes, so a receiver trickling a byte every few seconds cannot hold a worker.
"""

from __future__ import annotations

import contextlib
import http.client
import ipaddress
import socket
import ssl
import threading
import time
from dataclasses import dataclass
from urllib.parse import urlsplit

from django.conf import settings

from campaigns.domain.webhook_targets import (
    Address,
    UrlParts,
    WebhookRefused,
    WebhookTarget,
    check_address,
    parse_networks,
    parse_target,
)

__all__ = ["DeliveryFailed", "WebhookRefused", "check_webhook_url", "post"]


class DeliveryFailed(Exception):
    """The POST did not get a 2xx answer within the deadline: `status` is the receiver's answer
    (None when there was none), `retry_after` its Retry-After header."""

    def __init__(self, message: str, status: int | None = None, retry_after: str | None = None):
        super().__init__(message)
        self.status = status
        self.retry_after = retry_after


@dataclass(frozen=True)
class Answer:
    status: int
    address: str


def _allowed_networks() -> tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...]:
    return parse_networks(getattr(settings, "WEBHOOK_ALLOWED_NETWORKS", ()))


def split(url: str) -> UrlParts:
    """urllib's split of `url`; raises WebhookRefused on what it cannot read (a bad port)."""
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError as exc:
        raise WebhookRefused(f"not a URL: {exc}") from exc
    return UrlParts(
        parts.scheme,
        parts.username,
        parts.password,
        parts.hostname,
        port,
        parts.path,
        parts.query,
    )


def target_for(url: str) -> WebhookTarget:
    return parse_target(
        split(url),
        allow_http=bool(getattr(settings, "WEBHOOK_ALLOW_HTTP", False)),
        allowed=_allowed_networks(),
    )


def resolve(target: WebhookTarget) -> list[Address]:
    """Every address of the target's host, each checked; raises WebhookRefused."""
    allowed = _allowed_networks()
    if target.literal is not None:
        check_address(target.literal, allowed)
        return [target.literal]
    try:
        infos = socket.getaddrinfo(target.host, target.port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError) as exc:
        raise WebhookRefused(f"{target.host!r} does not resolve: {exc}") from exc
    addresses = list(dict.fromkeys(ipaddress.ip_address(info[4][0]) for info in infos))
    for address in addresses:
        check_address(address, allowed)
    if not addresses:
        raise WebhookRefused(f"{target.host!r} has no address")
    return addresses


def check_webhook_url(url: str, *, resolve_host: bool = True) -> None:
    """Raise WebhookRefused if the worker would refuse to POST to `url` (the PATCH-time check;
    delivery checks again, since a name's addresses change). A name that does not resolve yet
    passes here: it is refused at delivery if it still does not."""
    target = target_for(url)
    if target.literal is not None:
        check_address(target.literal, _allowed_networks())
    elif resolve_host:
        try:
            resolve(target)
        except WebhookRefused as exc:
            if "does not resolve" not in str(exc):
                raise


class _PinnedConnection(http.client.HTTPSConnection):
    """HTTP(S) to one checked address; the host name only as Host and TLS server name."""

    def __init__(self, target: WebhookTarget, address: Address, timeout: float) -> None:
        context = ssl.create_default_context() if target.scheme == "https" else None
        super().__init__(target.host, target.port, timeout=timeout, context=context)
        self.address = str(address)
        self.tls = target.scheme == "https"

    def connect(self) -> None:
        raw = socket.create_connection((self.address, self.port), self.timeout)
        self.sock = raw  # the watchdog can shut it down mid-handshake
        if self.tls:
            self.sock = self._context.wrap_socket(raw, server_hostname=self.host)  # type: ignore[attr-defined]


def _watchdog(connection: _PinnedConnection, seconds: float) -> threading.Timer:
    def cut() -> None:
        sock = connection.sock
        if sock is not None:
            # The plain socket's shutdown, also on a TLS socket: wakes a blocked read.
            with contextlib.suppress(OSError):
                socket.socket.shutdown(sock, socket.SHUT_RDWR)

    timer = threading.Timer(seconds, cut)
    timer.daemon = True
    timer.start()
    return timer


def post(url: str, body: bytes, headers: dict[str, str], *, deadline: float) -> Answer:
    """POST `body` to `url` within `deadline` seconds in all; raises WebhookRefused (the target
    is not allowed: do not retry) or DeliveryFailed (retry later)."""
    started = time.monotonic()
    target = target_for(url)
    address = resolve(target)[0]
    remaining = deadline - (time.monotonic() - started)
    if remaining <= 0:
        raise DeliveryFailed(f"deadline of {deadline:g} s passed while resolving")
    connection = _PinnedConnection(target, address, timeout=remaining)
    timer = _watchdog(connection, remaining)
    try:
        connection.request("POST", target.path, body=body, headers=headers)
        response = connection.getresponse()
        response.read(65536)  # a short body at most; the rest is not waited for
        status = int(response.status)
        retry_after = response.getheader("Retry-After")
    except (OSError, http.client.HTTPException) as exc:
        elapsed = time.monotonic() - started
        if elapsed >= deadline:
            raise DeliveryFailed(f"no answer within the deadline of {deadline:g} s") from exc
        raise DeliveryFailed(f"{type(exc).__name__}: {exc}") from exc
    finally:
        timer.cancel()
        connection.close()
    if time.monotonic() - started > deadline:
        raise DeliveryFailed(f"no answer within the deadline of {deadline:g} s")
    if not 200 <= status < 300:
        # 3xx included: a redirect is not followed (it could point anywhere, even inward).
        raise DeliveryFailed(f"the receiver answered {status}", status, retry_after)
    return Answer(status, str(address))
