"""Keys that sign a caller in: a campaign's ingest keys (training loops, docs/mlflow.md) and a
person's API tokens (docs/domain.md §26). The raw key is returned once; only its digest is
stored."""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from datetime import datetime

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from campaigns.models import ApiToken, Campaign, IngestKey, ItemStatus, PlannedItem, RunKind
from campaigns.services.campaigns import real_user


@transaction.atomic
def issue_ingest_key(
    *,
    campaign: Campaign,
    acting_user: User | None = None,
    name: str = "training loop",
    item: PlannedItem | None = None,
    kind: str = "",
) -> tuple[IngestKey, str]:
    """A new ingest key for `campaign`; the raw key is returned once and never stored.

    Bound to `item` (one of the campaign's planned items, not cut) and `kind` (a run kind, or
    blank), the key lets an MLflow loop open runs without naming them (docs/mlflow.md).
    Raises ValidationError naming `item` or `kind`.
    """
    if item is not None:
        if item.campaign_id != campaign.pk:
            raise ValidationError({"item": f"item {item.pk} is not in this campaign"})
        if item.status == ItemStatus.CUT:
            raise ValidationError({"item": f"'{item.name}' was cut by a decision"})
    if kind and kind not in RunKind.values:
        raise ValidationError({"kind": f"a run kind is one of {', '.join(RunKind.values)}"})
    raw = "cdk_" + secrets.token_urlsafe(32)
    key = IngestKey.objects.create(
        campaign=campaign,
        name=name,
        prefix=raw[:12],
        digest=IngestKey.hash(raw),
        created_by=real_user(acting_user),
        item=item,
        kind=kind,
    )
    return key, raw


@transaction.atomic
def revoke_ingest_keys(
    *,
    campaign: Campaign,
    acting_user: User | None = None,
    keys: Sequence[IngestKey] | None = None,
) -> int:
    """Revoke every active key of `campaign` (a leaked key goes with its siblings), or only
    `keys` (the API revokes one key by id). Returns how many were active."""
    active = campaign.ingest_keys.filter(revoked_at__isnull=True)
    if keys is not None:
        active = active.filter(pk__in=[k.pk for k in keys])
    return active.update(revoked_at=timezone.now())


@transaction.atomic
def issue_api_token(
    *,
    owner: User,
    acting_user: User | None = None,
    name: str = "",
    expires_at: datetime | None = None,
) -> tuple[ApiToken, str]:
    """A new API token for `owner` (`Authorization: Token <key>`); the raw key is returned once
    and only its digest is stored (docs/domain.md §26). Past `expires_at` it signs in nobody."""
    raw = "cdt_" + secrets.token_urlsafe(32)
    token = ApiToken.objects.create(
        user=owner, name=name, prefix=raw[:12], digest=ApiToken.hash(raw), expires_at=expires_at
    )
    return token, raw
