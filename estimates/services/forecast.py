"""The forecast's persistence: `Estimate` rows per campaign and item, versioned so a superseded
or duplicate delivery is a no-op (docs/domain.md §10).

A plan change bumps the campaign's input version (`bump`, called by
`estimates.services.mark_stale`); the task calls `recompute(campaign_id, version)`, which
computes with `estimates.selectors.forecast_inputs.compute_forecast` and lands the result in one
transaction, only if `version` is still current and has not landed yet. `stale_estimates()`
lists what the periodic sweep re-enqueues.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta
from typing import Any

from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import QuerySet, Value
from django.db.models.functions import Coalesce
from django.utils import timezone

from campaigns.models import Campaign
from estimates.domain.forecast_inputs import Forecast, ItemForecast, h
from estimates.models import Estimate, EstimateStatus
from estimates.selectors.forecast_inputs import compute_forecast

log = logging.getLogger(__name__)


def campaign_row(campaign_id: int) -> QuerySet[Estimate]:
    return Estimate.objects.filter(campaign_id=campaign_id, item__isnull=True)


def bump(campaign_id: int, *, create: bool) -> int | None:
    """New input version for the campaign's estimates, all marked stale; None if no row and
    `create` is off. Runs inside the caller's transaction and locks the campaign row."""
    row = campaign_row(campaign_id).select_for_update().first()
    if row is None:
        if not create:
            return None
        Estimate.objects.get_or_create(campaign_id=campaign_id, item=None)
        row = campaign_row(campaign_id).select_for_update().get()
    version = int(row.input_version) + 1
    # Keep the first moment it went stale: the sweep measures how long it has been waiting.
    Estimate.objects.filter(campaign_id=campaign_id).update(
        input_version=version,
        status=EstimateStatus.STALE,
        stale_since=Coalesce("stale_since", Value(timezone.now())),
    )
    return version


@transaction.atomic
def land_forecast(campaign_id: int, version: int, forecast: Forecast) -> bool:
    """Write the campaign's and every item's estimate, only if `version` is still current and
    has not landed yet. One transaction: readers never see half a forecast."""
    row = campaign_row(campaign_id).select_for_update().first()
    if row is None or row.input_version != version:
        return False
    if row.computed_version is not None and row.computed_version >= version:
        return False
    now = timezone.now()
    previous = row.outputs if isinstance(row.outputs, dict) else {}
    row.outputs = {**forecast.as_json(), "landings": int(previous.get("landings", 0)) + 1}
    row.inputs = forecast.inputs
    row.time_source = forecast.time_source
    row.status = EstimateStatus.FRESH
    row.stale_since = None
    row.computed_version = version
    row.computed_at = now
    row.error = ""
    row.save(
        update_fields=[
            "outputs",
            "inputs",
            "time_source",
            "status",
            "stale_since",
            "computed_version",
            "computed_at",
            "error",
        ]
    )
    _land_items(campaign_id, version, forecast.items, now)
    return True


def _item_row(item: ItemForecast) -> tuple[dict[str, Any], dict[str, Any]]:
    """What an item's estimate row records: its inputs and its outputs."""
    inputs = {
        "planned_hours": h(item.planned_hours),
        "gpu": item.gpu,
        "config": item.config,
        "pilot": item.pilot,
    }
    return inputs, item.as_json()


def _land_items(
    campaign_id: int, version: int, forecasts: tuple[ItemForecast, ...], now: datetime
) -> None:
    # Only time_source, inputs and outputs differ per item, and most items keep theirs from one
    # version to the next (a pilot moves one item): rewrite those rows only, and stamp the
    # version on all of them with a single UPDATE.
    items = Estimate.objects.filter(campaign_id=campaign_id, item__isnull=False)
    existing = {
        e.item_id: e for e in items.only("id", "item_id", "time_source", "inputs", "outputs")
    }
    changed, created = [], []
    for item in forecasts:
        inputs, outputs = _item_row(item)
        estimate = existing.get(item.id)
        if estimate is None:
            created.append(
                Estimate(
                    campaign_id=campaign_id,
                    item_id=item.id,
                    input_version=version,
                    computed_version=version,
                    status=EstimateStatus.FRESH,
                    time_source=item.time_source,
                    inputs=inputs,
                    outputs=outputs,
                    computed_at=now,
                )
            )
        elif (estimate.time_source, estimate.inputs, estimate.outputs) != (
            item.time_source,
            inputs,
            outputs,
        ):
            estimate.time_source, estimate.inputs, estimate.outputs = (
                item.time_source,
                inputs,
                outputs,
            )
            changed.append(estimate)
    Estimate.objects.bulk_update(changed, ["time_source", "inputs", "outputs"], batch_size=200)
    items.update(
        input_version=version,
        computed_version=version,
        status=EstimateStatus.FRESH,
        stale_since=None,
        computed_at=now,
        error="",
    )
    Estimate.objects.bulk_create(created, batch_size=500)


@transaction.atomic
def land_failure(campaign_id: int, version: int, error: str) -> bool:
    """The plan cannot be forecast as it stands: say why; the last good outputs stay."""
    row = campaign_row(campaign_id).select_for_update().first()
    if row is None or row.input_version != version:
        return False
    if row.computed_version is not None and row.computed_version >= version:
        return False
    Estimate.objects.filter(campaign_id=campaign_id).update(
        status=EstimateStatus.FAILED,
        stale_since=None,
        computed_version=version,
        computed_at=timezone.now(),
        error=error[:2000],
    )
    return True


def recompute(campaign_id: int, version: int) -> str:
    """Compute and land version `version` of the campaign's forecast; what happened, in a word.

    Idempotent: a superseded version or one that already landed does nothing.
    """
    state = campaign_row(campaign_id).values_list("input_version", "computed_version").first()
    if state is None:
        return "missing"
    current, computed = state
    if current != version:
        return "superseded"
    if computed is not None and computed >= version:
        return "duplicate"
    campaign = Campaign.objects.filter(pk=campaign_id).first()
    if campaign is None:
        return "missing"
    try:
        forecast = compute_forecast(campaign)
    except (ValueError, ArithmeticError) as exc:
        # The pure modules refuse this plan; retrying will not help until the plan changes.
        log.warning("forecast of campaign %s (v%s) failed: %s", campaign_id, version, exc)
        return "failed" if land_failure(campaign_id, version, str(exc)) else "superseded"
    return "landed" if land_forecast(campaign_id, version, forecast) else "superseded"


def stale_estimates(older_than_seconds: float, limit: int = 1000) -> list[tuple[int, int]]:
    """(campaign id, version) of campaign forecasts stale for longer than the given time."""
    cutoff = timezone.now() - timedelta(seconds=older_than_seconds)
    rows = (
        Estimate.objects.filter(
            item__isnull=True, status=EstimateStatus.STALE, stale_since__lt=cutoff
        )
        .order_by("stale_since")
        .values_list("campaign_id", "input_version")[:limit]
    )
    return [(int(c), int(v)) for c, v in rows]


def ensure_forecast(*, campaign: Campaign, acting_user: User | None = None) -> Estimate:
    """The persisted campaign forecast; computed here, synchronously, if none ever landed.

    Called where a forecast must exist (the forecast endpoint, the campaign page's panel). Not
    one transaction: the version is bumped in its own and the forecast lands in `recompute`'s,
    as the task's does, so the lock order stays the task's (campaigns/services/campaigns.py)."""
    row = campaign_row(campaign.pk).first()
    if row is None or row.computed_version is None:
        version = row.input_version if row is not None else 0
        if not version:
            # No version yet: make one without enqueueing, since it is computed right here.
            with transaction.atomic():
                version = bump(campaign.pk, create=True) or 0
        recompute(campaign.pk, version)
        row = campaign_row(campaign.pk).get()
    return row
