"""Planned items: added, amended and removed (docs/domain.md §3, §6). While drafting an edit
is plain; after commit every change is an amendment that says why, the baseline untouched."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import transaction

from campaigns import events
from campaigns.models import AMENDABLE_ITEM_FIELDS, Amendment, Campaign, PlannedItem
from campaigns.services.campaigns import lock_campaign, real_user


def _jsonable(value: Any) -> Any:
    return str(value) if isinstance(value, Decimal) else value


def check_item(
    *,
    campaign: Campaign,
    item: PlannedItem | None = None,
    changes: dict[str, Any],
    amendment_reason: str = "",
) -> None:
    """Refuse an item change the plan forbids: after commit a new item, or a change of an
    amendable field, needs a reason; a closed campaign takes none; names are unique."""
    campaign.refuse_if_closed()
    name = changes.get("name")
    if name is not None:
        clash = PlannedItem.objects.filter(campaign=campaign, name=name)
        if item is not None and item.pk:
            clash = clash.exclude(pk=item.pk)
        if clash.exists():
            raise ValidationError({"name": "this campaign already has an item of that name"})
    if campaign.is_draft:
        return
    amended = [f for f in changes if f in AMENDABLE_ITEM_FIELDS]
    if (item is None or amended) and not (amendment_reason or "").strip():
        what = "is added" if item is None else f"changes ({', '.join(amended)})"
        raise ValidationError(
            {"amendment_reason": f"the plan is committed: say why this item {what}"}
        )


@transaction.atomic
def create_item(
    *,
    campaign: Campaign,
    acting_user: User | None = None,
    amendment_reason: str = "",
    **fields: Any,
) -> PlannedItem:
    """Add a planned item: plainly while drafting; after commit as an amendment with a reason
    (the item and its amendment record in one transaction; the baseline untouched)."""
    locked = lock_campaign(campaign)
    check_item(campaign=locked, changes=fields, amendment_reason=amendment_reason)
    item = PlannedItem(campaign=locked, **fields)
    item.full_clean()
    item._amendment = True  # type: ignore[attr-defined]
    item.save()
    events.emit(events.PLAN_CHANGED, campaign_id=locked.pk)
    if not locked.is_draft:
        Amendment.objects.create(
            campaign=locked,
            item=item,
            changes={"before": {}, "after": {f: _jsonable(getattr(item, f)) for f in fields}},
            reason=amendment_reason.strip(),
            made_by=real_user(acting_user),
        )
    return item


@transaction.atomic
def amend_item(
    *, item: PlannedItem, acting_user: User | None = None, reason: str = "", **changes: Any
) -> Amendment | None:
    """Change a planned item. While drafting it is an edit; after commit an amendment that
    records before, after and why (returned); the baseline stays as it was frozen."""
    locked = (
        PlannedItem.objects.select_for_update(no_key=True)
        .select_related("campaign")
        .get(pk=item.pk)
    )
    unknown = set(changes) - set(AMENDABLE_ITEM_FIELDS)
    if unknown:
        raise ValidationError({f: "this field cannot be changed here" for f in sorted(unknown)})
    changed = {f: v for f, v in changes.items() if getattr(locked, f) != v}
    if not changed:
        return None
    check_item(campaign=locked.campaign, item=locked, changes=changed, amendment_reason=reason)
    before = {f: _jsonable(getattr(locked, f)) for f in changed}
    for field, value in changed.items():
        setattr(locked, field, value)
    if "planned_hours" in changed:
        # Hours typed by hand are the planner's own figure, no longer a clone's lesson (§21).
        locked.calibrated_from = None
    locked.full_clean()
    locked._amendment = True  # type: ignore[attr-defined]
    locked.save()
    events.emit(events.PLAN_CHANGED, campaign_id=locked.campaign_id)
    if locked.campaign.is_draft:
        return None
    return Amendment.objects.create(
        campaign=locked.campaign,
        item=locked,
        changes={"before": before, "after": {f: _jsonable(getattr(locked, f)) for f in changed}},
        reason=reason.strip(),
        made_by=real_user(acting_user),
    )


@transaction.atomic
def remove_item(*, item: PlannedItem, acting_user: User | None = None) -> None:
    """Delete a draft's item; a committed item is never deleted (cut it with a decision)."""
    locked = (
        PlannedItem.objects.select_for_update(no_key=True)
        .select_related("campaign")
        .get(pk=item.pk)
    )
    locked.delete()  # the model refuses after commit (PlanFrozen)
    events.emit(events.PLAN_ROW_REMOVED, campaign_id=locked.campaign_id)
