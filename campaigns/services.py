"""The write path of the campaigns app: one function per domain action.

Each action is a plain, `@transaction.atomic` function taking keyword arguments and raising the
domain's exceptions (`PlanFrozen`, `CommitRefused`, `CampaignClosed`, Django's
`ValidationError` naming the field). The admin (forms, inlines, actions) and the API views both
call these functions and nothing else writes these models, so the two can never disagree. The
rules they enforce are stated in docs/domain.md.
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from .models import Campaign, IngestKey, ItemStatus, PlannedItem, RunKind

# --- Ingest keys ---------------------------------------------------------------------------


@transaction.atomic
def issue_ingest_key(
    *,
    campaign: Campaign,
    user: Any = None,
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
    return IngestKey.issue(campaign, name=name, user=user, item=item, kind=kind)


@transaction.atomic
def revoke_ingest_keys(*, campaign: Campaign, user: Any = None) -> int:
    """Revoke every active key of `campaign` (a leaked key goes with its siblings)."""
    return campaign.ingest_keys.filter(revoked_at__isnull=True).update(revoked_at=timezone.now())
