"""`Authorization: Bearer <key>`: a campaign ingest key, which may only append run data to its
one campaign. Users authenticate with their API tokens (`Token <key>`, stored hashed:
campaigns/models/api_tokens.py) or the admin session."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest
from django.utils.functional import cached_property
from rest_framework import authentication, exceptions
from rest_framework.request import Request

from campaigns.models import ApiToken, IngestKey


class IngestPrincipal:
    """Stands in for `request.user` when a training loop calls with an ingest key."""

    is_authenticated = True
    is_active = True
    is_anonymous = False
    is_superuser = False
    is_staff = False
    pk = None
    id = None

    def __init__(self, key: IngestKey) -> None:
        self.key = key

    @cached_property
    def campaign_id(self) -> int:
        return int(self.key.campaign_id)

    @cached_property
    def team_id(self) -> int:
        return int(self.key.campaign.team_id)

    def __str__(self) -> str:
        return f"ingest key {self.key.prefix}…"


_LOOKED_UP = "_active_ingest_key"


def active_ingest_key(request: HttpRequest, raw: str) -> IngestKey | None:
    """The unrevoked ingest key `raw`, with its campaign, or None; looked up once per request
    (the idempotency middleware asks for its principal first, this authentication again: one
    statement on a logging call's hot path, not two)."""
    looked_up = getattr(request, _LOOKED_UP, None)
    if looked_up is not None and looked_up[0] == raw:
        return looked_up[1]  # type: ignore[no-any-return]
    key = (
        IngestKey.objects.select_related("campaign")
        .filter(digest=IngestKey.hash(raw), revoked_at__isnull=True)
        .first()
    )
    setattr(request, _LOOKED_UP, (raw, key))
    return key


def is_ingest(user: Any) -> bool:
    return isinstance(user, IngestPrincipal)


class IngestKeyAuthentication(authentication.BaseAuthentication):
    keyword = "Bearer"

    def authenticate(self, request: Request) -> tuple[IngestPrincipal, IngestKey] | None:
        header = authentication.get_authorization_header(request).split()
        if not header or header[0].lower() != self.keyword.lower().encode():
            return None
        if len(header) != 2:
            raise exceptions.AuthenticationFailed("Authorization: Bearer <ingest key>")
        try:
            raw = header[1].decode()
        except UnicodeError as exc:
            raise exceptions.AuthenticationFailed("the ingest key is not valid text") from exc
        key = active_ingest_key(request._request, raw)
        if key is None:
            raise exceptions.AuthenticationFailed("unknown or revoked ingest key")
        return IngestPrincipal(key), key

    def authenticate_header(self, request: Request) -> str:
        return self.keyword


class TokenAuthentication(authentication.TokenAuthentication):
    """DRF's `Authorization: Token <key>`, looked up by the key's digest (docs/domain.md §26):
    the key itself is stored nowhere."""

    def authenticate_credentials(self, key: str) -> tuple[Any, None]:
        user = ApiToken.user_for(key)
        if user is None:
            raise exceptions.AuthenticationFailed("Invalid token.")
        return user, None
