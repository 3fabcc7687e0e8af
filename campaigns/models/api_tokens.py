"""Users' API tokens (`Authorization: Token <key>`), stored as a SHA-256 digest only
(docs/domain.md §26).

DRF's own token table keeps the key in clear (it is the primary key); a database dump would
then sign in as every user. Here, as for ingest keys, only the digest and a short prefix (to
tell tokens apart) are kept; the key is shown once, when issued. A user may hold several (a
laptop, a CI job); each is revoked on its own.
"""

from __future__ import annotations

import hashlib
import secrets
from typing import Any

from django.conf import settings
from django.db import models


class ApiToken(models.Model):
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens"
    )
    name = models.CharField(max_length=100, blank=True)
    prefix = models.CharField(max_length=12, editable=False)
    digest = models.CharField(max_length=64, unique=True, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"{self.prefix}… ({self.user})"

    @staticmethod
    def hash(raw: str) -> str:
        return hashlib.sha256(raw.encode()).hexdigest()

    @classmethod
    def issue(cls, user: Any, *, name: str = "") -> tuple[ApiToken, str]:
        """A new token for `user`; the raw key is returned this once and never stored."""
        raw = "cdt_" + secrets.token_urlsafe(32)
        token = cls.objects.create(user=user, name=name, prefix=raw[:12], digest=cls.hash(raw))
        return token, raw

    @classmethod
    def user_for(cls, raw: str) -> Any:
        """The active user whose token `raw` is, or None."""
        token = (
            cls.objects.select_related("user")
            .filter(digest=cls.hash(raw), user__is_active=True)
            .first()
        )
        return token.user if token is not None else None
