"""Rental lots a draft plan reserves; commit posts them to the ledger once (docs/domain.md §9)."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import User
from django.db import transaction

from campaigns import events
from campaigns.models import Campaign, LotReservation
from campaigns.services.plans import add_draft_row, change_draft_row, remove_draft_row


@transaction.atomic
def reserve_lot(
    *, campaign: Campaign, acting_user: User | None = None, **fields: Any
) -> LotReservation:
    """Reserve rental lots for the draft plan; commit posts them to the ledger once."""
    lot = add_draft_row(campaign, "reserved lots", LotReservation(campaign=campaign, **fields))
    events.emit(events.PLAN_CHANGED, campaign_id=campaign.pk)
    return lot


@transaction.atomic
def change_lot(
    *, lot: LotReservation, acting_user: User | None = None, **changes: Any
) -> LotReservation:
    changed = change_draft_row(lot, "reserved lots", changes)
    events.emit(events.PLAN_CHANGED, campaign_id=lot.campaign_id)
    return changed


@transaction.atomic
def release_lot(*, lot: LotReservation, acting_user: User | None = None) -> None:
    remove_draft_row(lot, "reserved lots")
    events.emit(events.PLAN_ROW_REMOVED, campaign_id=lot.campaign_id)
