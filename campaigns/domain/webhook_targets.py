"""Where an alert webhook may point (docs/domain.md §19): pure checks, no I/O.

A team's owner chooses the URL; the worker POSTs to it. So the URL must not turn the worker
inward: only `https` (plain `http` only where the operator allows it, for development), a host
name or a literal address, no user-info, and every address it resolves to must be a *global*
one: not loopback, private, shared (CGNAT), link-local (cloud metadata), multicast, reserved,
documentation or unspecified, in IPv4 or IPv6, nor an IPv4 address wrapped in IPv6 (mapped,
6to4, Teredo, NAT64). Names that only ever mean the local site (`localhost`, `*.internal`, …)
are refused before any lookup. Resolving is the caller's I/O (`campaigns.outbound`); this
module judges the parsed URL and the addresses.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from dataclasses import dataclass

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network

# Names that resolve only inside a site (RFC 6761, 6762, 8375 and the clouds' metadata names).
LOCAL_SUFFIXES = (
    "localhost",
    ".localhost",
    ".local",
    ".localdomain",
    ".internal",
    ".home.arpa",
    ".lan",
    ".intranet",
)
NAT64 = ipaddress.IPv6Network("64:ff9b::/96")


class WebhookRefused(ValueError):
    """The URL or an address it resolves to is not one the worker may POST to."""


@dataclass(frozen=True)
class WebhookTarget:
    scheme: str  # "https" (or "http" where allowed)
    host: str  # as written, lower-cased, without brackets: sent as Host and TLS SNI
    port: int
    path: str  # path and query, at least "/"
    literal: Address | None  # the host is itself an address


@dataclass(frozen=True)
class UrlParts:
    """A URL split (by `campaigns.outbound.split`, urllib's urlsplit)."""

    scheme: str
    username: str | None
    password: str | None
    hostname: str | None
    port: int | None
    path: str
    query: str


def parse_target(
    parts: UrlParts, *, allow_http: bool, allowed: Iterable[Network] = ()
) -> WebhookTarget:
    """The parts of the URL the worker connects with; raises WebhookRefused naming why (a
    literal address is judged here, against the operator's `allowed` networks too)."""
    port = parts.port
    schemes = ("https", "http") if allow_http else ("https",)
    if parts.scheme.lower() not in schemes:
        raise WebhookRefused(f"the scheme must be {' or '.join(schemes)}, not {parts.scheme!r}")
    if parts.username is not None or parts.password is not None:
        raise WebhookRefused("user names and passwords in the URL are not allowed")
    host = (parts.hostname or "").rstrip(".").lower()
    if not host:
        raise WebhookRefused("the URL has no host")
    if host == "localhost" or host.endswith(LOCAL_SUFFIXES):
        raise WebhookRefused(f"{host!r} names a local host")
    literal: Address | None
    try:
        literal = ipaddress.ip_address(host)
    except ValueError:
        literal = None
    if literal is not None:
        check_address(literal, allowed)
    scheme = parts.scheme.lower()
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    return WebhookTarget(scheme, host, port or (443 if scheme == "https" else 80), path, literal)


def embedded_ipv4(address: Address) -> list[ipaddress.IPv4Address]:
    """IPv4 addresses an IPv6 address carries (mapped, 6to4, Teredo, NAT64): each is judged."""
    if not isinstance(address, ipaddress.IPv6Address):
        return []
    found = [a for a in (address.ipv4_mapped, address.sixtofour) if a is not None]
    if address.teredo is not None:
        found += list(address.teredo)
    if address in NAT64:
        found.append(ipaddress.IPv4Address(int(address) & 0xFFFFFFFF))
    return found


def check_address(address: Address, allowed: Iterable[Network] = ()) -> None:
    """Raise WebhookRefused unless `address` (and any IPv4 inside it) is global unicast, or it
    lies in one of the operator's `allowed` networks (WEBHOOK_ALLOWED_NETWORKS)."""
    if any(address in network for network in allowed if network.version == address.version):
        return
    for candidate in [address, *embedded_ipv4(address)]:
        if not candidate.is_global or candidate.is_multicast:
            raise WebhookRefused(f"{address} is not a public address")


def parse_networks(values: Iterable[str]) -> tuple[Network, ...]:
    return tuple(ipaddress.ip_network(value.strip(), strict=False) for value in values if value)
