"""Who is calling the MLflow facade: `Authorization: Bearer <token>` (MLFLOW_TRACKING_TOKEN).

The token is a campaign ingest key (every experiment is then that one campaign) or a user's own
API token (experiments are the user's campaigns, by id or exact title). Scoping follows
campaigns/api/permissions.py: another team's objects are never found.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db.models import QuerySet
from django.http import HttpRequest

from campaigns.models import ApiToken, Campaign, IngestKey, Membership, Run, team_ids_for
from mlflow_api.errors import MlflowError


@dataclass
class Caller:
    key: IngestKey | None = None
    user: Any = None

    @property
    def principal(self) -> str:
        return f"ingest:{self.key.pk}" if self.key is not None else f"user:{self.user.pk}"

    def campaigns(self) -> QuerySet[Campaign]:
        if self.key is not None:
            return Campaign.objects.filter(pk=self.key.campaign_id)
        return Campaign.objects.for_user(self.user)

    def runs(self) -> QuerySet[Run]:
        if self.key is not None:
            return Run.objects.filter(campaign_id=self.key.campaign_id)
        if getattr(self.user, "is_superuser", False):
            return Run.objects.all()
        return Run.objects.filter(team_id__in=team_ids_for(self.user))

    def require_write(self, team_id: int) -> None:
        """An ingest key writes to its campaign (already the only one it sees); a user needs to
        be a planner or owner of the team."""
        if self.key is None and not Membership.objects.can_write(self.user, team_id):
            raise MlflowError(
                "PERMISSION_DENIED", "your role on this team only allows reading", status=403
            )


def authenticate(request: HttpRequest) -> Caller:
    header = request.META.get("HTTP_AUTHORIZATION", "")
    scheme, _, credential = header.partition(" ")
    credential = credential.strip()
    if scheme.lower() not in ("bearer", "token") or not credential:
        raise MlflowError(
            "UNAUTHENTICATED",
            "set MLFLOW_TRACKING_TOKEN to a campaign ingest key or your API token",
            status=401,
        )
    key = (
        IngestKey.objects.select_related("campaign", "item")
        .filter(digest=IngestKey.hash(credential), revoked_at__isnull=True)
        .first()
    )
    if key is not None:
        return Caller(key=key)
    user = ApiToken.user_for(credential)
    if user is not None:
        return Caller(user=user)
    raise MlflowError("UNAUTHENTICATED", "unknown or revoked token", status=401)
