"""A text column kept encrypted at rest: a webhook channel's signing secret (docs/domain.md §26).

The secret signs every alert POST (HMAC-SHA256), so the server needs it back in clear: a hash
would not do, and "shown once" still needs it stored. It is therefore sealed with Fernet
(AES-128-CBC with an HMAC-SHA256 tag) under a key derived from SECRET_KEY for this one purpose
(HKDF-SHA256, its own `info`), so a database dump or backup without the settings holds no
usable secret. Keys in SECRET_KEY_FALLBACKS still open older values, so rotating SECRET_KEY
keeps every webhook working (the next save seals under the new key).

Stored form: "sealed:v1:<fernet token>". A value without that prefix is a row from before this
column was sealed; it reads as it is (the migration seals every such row). A value no key opens
(SECRET_KEY changed without a fallback) reads as "" and is logged: delivery then refuses to send
unsigned (ledger/transports/webhook.py) until an owner sets the secret again.
"""

from __future__ import annotations

import base64
import logging
from typing import Any

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from django.conf import settings
from django.db import models

PREFIX = "sealed:v1:"
PURPOSE = b"campaign-desk webhook secret v1"
log = logging.getLogger(__name__)


def _fernet(secret_key: str) -> Fernet:
    derived = HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=PURPOSE).derive(
        secret_key.encode()
    )
    return Fernet(base64.urlsafe_b64encode(derived))


def _keys() -> MultiFernet:
    fallbacks = list(getattr(settings, "SECRET_KEY_FALLBACKS", []) or [])
    return MultiFernet([_fernet(k) for k in [settings.SECRET_KEY, *fallbacks]])


def seal(text: str) -> str:
    if not text:
        return ""
    return PREFIX + _keys().encrypt(text.encode()).decode()


def unseal(stored: str | None) -> str:
    if not stored:
        return ""
    if not stored.startswith(PREFIX):
        return stored  # written before the column was sealed
    try:
        return _keys().decrypt(stored[len(PREFIX) :].encode()).decode()
    except InvalidToken:
        log.error("a sealed secret opens with no key of SECRET_KEY/SECRET_KEY_FALLBACKS")
        return ""


class SealedTextField(models.TextField):  # type: ignore[type-arg]
    """Reads and writes clear text; the database only ever holds `seal(text)`."""

    def from_db_value(self, value: Any, expression: Any, connection: Any) -> str:
        return unseal(value)

    def get_prep_value(self, value: Any) -> Any:
        value = super().get_prep_value(value)
        if value is None or value == "" or str(value).startswith(PREFIX):
            return value
        return seal(str(value))
