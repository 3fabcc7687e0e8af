"""Who is calling the MLflow facade: `Authorization: Bearer <token>` (MLFLOW_TRACKING_TOKEN).

The token is a campaign ingest key (every experiment is then that one campaign) or a user's own
API token (experiments are the user's campaigns, by id or exact title). Scoping follows
campaigns/api/permissions.py: another team's objects are never found.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from django.db.models import QuerySet
from django.http import HttpRequest

from campaigns.models import ApiToken, Campaign, IngestKey, Membership, Run, team_ids_for
from campaigns.services.run_lock import KeyScope
from mlflow_api.errors import MlflowError

# A logging call's key is remembered by each server process for a few seconds (issue 34 item 5:
# its lookup was one of a synchronous log_metric's round trips to PostgreSQL). Not trusted for
# longer than the call: the write that follows checks in its own locking statement that the key
# is still unrevoked (Caller.runs), so a revoked key is refused at once, in every process.
KEY_MEMORY_SECONDS = 5.0
KEY_MEMORY_SIZE = 1000
_remembered: dict[str, tuple[float, tuple[Any, ...]]] = {}
_KEY_FIELDS = [f.attname for f in IngestKey._meta.concrete_fields]


def _recall(digest: str) -> IngestKey | None:
    entry = _remembered.get(digest)
    if entry is None or entry[0] < time.monotonic():
        return None
    # A new instance each call: nothing one request caches on it reaches another.
    return IngestKey.from_db("default", _KEY_FIELDS, entry[1])


def _remember(digest: str, key: IngestKey) -> None:
    if len(_remembered) >= KEY_MEMORY_SIZE:
        _remembered.clear()
    values = tuple(getattr(key, name) for name in _KEY_FIELDS)
    _remembered[digest] = (time.monotonic() + KEY_MEMORY_SECONDS, values)


def forget(digest: str) -> None:
    _remembered.pop(digest, None)


@dataclass
class Caller:
    key: IngestKey | None = None
    user: Any = None
    # The key came from this process's memory: its revocation is checked by the write itself.
    remembered: bool = False
    digest: str = ""

    @property
    def principal(self) -> str:
        return f"ingest:{self.key.pk}" if self.key is not None else f"user:{self.user.pk}"

    def campaigns(self) -> QuerySet[Campaign]:
        if self.key is not None:
            return Campaign.objects.filter(pk=self.key.campaign_id)
        return Campaign.objects.for_user(self.user)

    def runs(self) -> QuerySet[Run]:
        if self.key is not None:
            return self.key_scope().runs()
        if getattr(self.user, "is_superuser", False):
            return Run.objects.all()
        return Run.objects.filter(team_id__in=team_ids_for(self.user))

    def key_scope(self) -> KeyScope:
        """The key's runs: its campaign's, and with a remembered key, only while it is
        unrevoked."""
        assert self.key is not None
        return KeyScope(self.key.campaign_id, self.key.pk if self.remembered else None)

    def revoked_meanwhile(self) -> bool:
        """Whether a remembered key was revoked since (then forgotten): a write that found no
        run tells a revoked key's 401 from a missing run's 404 with it."""
        if not self.remembered or self.key is None:
            return False
        if IngestKey.objects.filter(pk=self.key.pk, revoked_at__isnull=True).exists():
            return False
        forget(self.digest)
        return True

    def require_write(self, team_id: int) -> None:
        """An ingest key writes to its campaign (already the only one it sees); a user needs to
        be a planner or owner of the team."""
        if self.key is None and not Membership.objects.can_write(self.user, team_id):
            raise MlflowError(
                "PERMISSION_DENIED", "your role on this team only allows reading", status=403
            )


def authenticate(request: HttpRequest, *, remember: bool = False) -> Caller:
    """The caller of `request`; with `remember` (the logging calls, whose write checks the key
    again), an ingest key seen in the last few seconds is taken from this process's memory."""
    header = request.META.get("HTTP_AUTHORIZATION", "")
    scheme, _, credential = header.partition(" ")
    credential = credential.strip()
    if scheme.lower() not in ("bearer", "token") or not credential:
        raise MlflowError(
            "UNAUTHENTICATED",
            "set MLFLOW_TRACKING_TOKEN to a campaign ingest key or your API token",
            status=401,
        )
    digest = IngestKey.hash(credential)
    if remember and (known := _recall(digest)) is not None:
        return Caller(key=known, remembered=True, digest=digest)
    key = (
        IngestKey.objects.select_related("campaign", "item")
        .filter(digest=digest, revoked_at__isnull=True)
        .first()
    )
    if key is not None:
        if remember:
            _remember(digest, key)
        return Caller(key=key, digest=digest)
    user = ApiToken.user_for(credential)
    if user is not None:
        return Caller(user=user)
    raise MlflowError("UNAUTHENTICATED", "unknown or revoked token", status=401)
