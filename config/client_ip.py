"""Which proxy headers to believe (README, Production notes: "Proxy headers").

`X-Forwarded-For` and `X-Forwarded-Proto` say what a proxy saw: the client's address and
whether it spoke TLS. Any client can send them too, so they are believed only when the
connection itself comes from an address in `TRUSTED_PROXIES` (CIDRs, settings): docker-compose
gives Caddy a fixed address and names it there. From anyone else `ProxyHeadersMiddleware`
drops them before any other code reads them, so gunicorn reached directly cannot be told that a
request was https, and the login lockout (django-axes, AXES_CLIENT_IP_CALLABLE) counts by the
socket's address however the header rotates.

Behind trusted proxies the client is the right-most `X-Forwarded-For` entry that is not itself
a trusted proxy (each proxy appends what it saw; entries left of that were written by the
client and prove nothing).
"""

from __future__ import annotations

import functools
import ipaddress
from collections.abc import Callable, Iterable

from django.conf import settings
from django.http import HttpRequest, HttpResponse

# What a proxy sets and a client must not: dropped unless the connection is a trusted proxy's.
PROXY_HEADERS = ("HTTP_X_FORWARDED_FOR", "HTTP_X_FORWARDED_PROTO", "HTTP_X_FORWARDED_HOST")

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


@functools.cache
def _networks(spec: tuple[str, ...]) -> tuple[Network, ...]:
    return tuple(ipaddress.ip_network(cidr, strict=False) for cidr in spec)


def trusted_networks() -> tuple[Network, ...]:
    return _networks(tuple(getattr(settings, "TRUSTED_PROXIES", ()) or ()))


def is_trusted_proxy(address: str, networks: Iterable[Network] | None = None) -> bool:
    try:
        ip = ipaddress.ip_address(address.strip())
    except ValueError:
        return False
    return any(ip in net for net in (trusted_networks() if networks is None else networks))


def client_ip(request: HttpRequest) -> str:
    """The client's address: the socket's, or, from a trusted proxy, the nearest untrusted
    `X-Forwarded-For` entry."""
    remote = str(request.META.get("REMOTE_ADDR") or "")
    if not is_trusted_proxy(remote):
        return remote
    hops = [h.strip() for h in str(request.META.get("HTTP_X_FORWARDED_FOR", "")).split(",")]
    for hop in reversed([h for h in hops if h]):
        if not is_trusted_proxy(hop):
            return hop
    return remote


class ProxyHeadersMiddleware:
    """First in MIDDLEWARE: a request not from a trusted proxy loses its proxy headers."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if not is_trusted_proxy(str(request.META.get("REMOTE_ADDR") or "")):
            for header in PROXY_HEADERS:
                request.META.pop(header, None)
        return self.get_response(request)
