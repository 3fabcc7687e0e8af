"""Users' API tokens (`Authorization: Token <key>`), stored as a SHA-256 digest only
(docs/domain.md §26).

DRF's own token table keeps the key in clear (it is the primary key); a database dump would
then sign in as every user. Here, as for ingest keys, only the digest and a short prefix (to
tell tokens apart) are kept; the key is shown once, when issued. A user may hold several (a
laptop, a CI job); each is revoked on its own.
"""

from __future__ import annotations

import functools
import hashlib
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import connections, models, router
from django.utils import timezone


class ApiToken(models.Model):
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens"
    )
    name = models.CharField(max_length=100, blank=True)
    prefix = models.CharField(max_length=12, editable=False)
    digest = models.CharField(max_length=64, unique=True, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)
    # Tokens minted from a signed-in session expire (API_TOKEN_HOURS); a command's may not.
    expires_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"{self.prefix}… ({self.user})"

    @staticmethod
    def hash(raw: str) -> str:
        return hashlib.sha256(raw.encode()).hexdigest()

    @classmethod
    def user_for(cls, raw: str) -> Any:
        """The active user whose token `raw` is, or None.

        Every API call with a token runs this once. It is one written-out statement (a raw
        queryset, which still converts each column as the ORM does) rather than
        `select_related("user").filter(...).first()`: building and compiling that query cost
        ~1.3 ms of CPU a call on this project's 2-core machine, the raw one ~0.3 ms."""
        alias = router.db_for_read(cls)
        users = (
            get_user_model()
            .objects.db_manager(alias)
            .raw(_user_for_digest_sql(alias), [cls.hash(raw), _now_for(alias)])
        )
        return next(iter(users), None)


def _now_for(alias: str) -> Any:
    """Now, as database `alias` stores a DateTimeField (a raw query's parameter is not
    converted: SQLite keeps datetimes as text)."""
    return connections[alias].ops.adapt_datetimefield_value(timezone.now())


@functools.cache
def _user_for_digest_sql(alias: str) -> str:
    """`SELECT <every User column> FROM user JOIN token … WHERE digest = %s AND is_active`,
    quoted for database `alias`."""
    quote = connections[alias].ops.quote_name
    user_model = get_user_model()
    columns = user_model._meta.concrete_fields
    selected = ", ".join(f"u.{quote(f.column)}" for f in columns)
    user_id = ApiToken._meta.get_field("user").column
    sql = (
        f"SELECT {selected} FROM {quote(user_model._meta.db_table)} u "
        f"JOIN {quote(ApiToken._meta.db_table)} t ON t.{quote(user_id)} = "
        f"u.{quote(user_model._meta.pk.column)} "
        f"WHERE t.{quote('digest')} = %s AND u.{quote('is_active')} "
        f"AND (t.{quote('expires_at')} IS NULL OR t.{quote('expires_at')} > %s)"
    )
    return sql
