"""The client address the login lockout counts by (django-axes' AXES_CLIENT_IP_CALLABLE).

Behind the proxy every request comes from the proxy's address, so the lockout would count all
clients as one. The proxy writes the address it saw into `X-Forwarded-For` (Caddy replaces what
the client sent; a proxy that appends puts it last), so the right-most entry is the one no
client can choose. The site is reachable only through the proxy (README, Production notes: the
same assumption that lets Django trust `X-Forwarded-Proto`); without the header, the socket's.
"""

from __future__ import annotations

from django.http import HttpRequest


def client_ip(request: HttpRequest) -> str:
    forwarded = request.META.get("HTTP_X_FORWARDED_FOR", "")
    last = forwarded.rsplit(",", 1)[-1].strip()
    return last or str(request.META.get("REMOTE_ADDR") or "")
