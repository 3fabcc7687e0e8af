"""Request rates: one bucket per ingest key (a runaway training loop cannot starve its team's
other loops or people), one per user. Rates come from REST_FRAMEWORK DEFAULT_THROTTLE_RATES
("ingest_key", "user") and are read on every request so that settings overrides apply."""

from __future__ import annotations

from typing import Any

from rest_framework.settings import api_settings
from rest_framework.throttling import SimpleRateThrottle

from .authentication import is_ingest


class _SettingsRate(SimpleRateThrottle):
    def get_rate(self) -> str | None:
        rate = api_settings.DEFAULT_THROTTLE_RATES.get(self.scope or "")
        return None if rate is None else str(rate)


class IngestKeyThrottle(_SettingsRate):
    scope = "ingest_key"

    def get_cache_key(self, request: Any, view: Any) -> str | None:
        if not is_ingest(request.user):
            return None
        return self.cache_format % {"scope": self.scope, "ident": request.user.key.pk}


class UserThrottle(_SettingsRate):
    """DRF's UserRateThrottle, minus ingest keys (they have their own bucket above)."""

    scope = "user"

    def get_cache_key(self, request: Any, view: Any) -> str | None:
        user = request.user
        if is_ingest(user) or not (user and user.is_authenticated):
            return None
        return self.cache_format % {"scope": self.scope, "ident": user.pk}
