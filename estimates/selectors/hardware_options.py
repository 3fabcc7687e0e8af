"""A campaign's hardware options: its remaining items, as forecast, on every catalog GPU.

Reads the persisted forecast (``forecasts.current_estimate``: pilot-driven hours where a pilot
was measured) and the items' configs, and ranks with
``estimates.domain.hardware_options.rank_options`` against the rental plans and the catalog's
published hourly rates in the campaign's currency (each hourly option names its provider and
date, docs/domain.md §24.8). Writes nothing.
"""

from __future__ import annotations

from typing import Any

from django.utils import timezone

from campaigns.models import Campaign, ItemStatus
from catalog.domain import catalog
from catalog.models import GpuModel, HourlyRate, RentalPlan
from estimates.domain import hardware_options as options
from estimates.domain.rate_offers import RateOffer
from estimates.forecasts import current_estimate
from estimates.models import plan_offer

# Done and cut items are not work left to rent hardware for.
_SKIPPED = frozenset({ItemStatus.DONE, ItemStatus.CUT})


def _gpus(value: Any) -> int:
    if isinstance(value, int) and not isinstance(value, bool) and value >= 1:
        return value
    return 1


def campaign_works(campaign: Campaign) -> tuple[list[options.Work], dict[str, str]]:
    """The campaign's remaining items as ``options.Work``, and where their pilots ran."""
    estimate = current_estimate(campaign)
    outputs: dict[str, Any] = estimate.outputs if isinstance(estimate.outputs, dict) else {}
    rows = {row.get("id"): row for row in outputs.get("items", []) if isinstance(row, dict)}
    works: list[options.Work] = []
    measured_on: dict[str, str] = {}
    # A pilot of an item that names no GPU ran on the campaign's reserved machine: when the
    # lots are all of one GPU model, that is where it was measured.
    lot_gpus = {
        name for name in campaign.lots.values_list("plan__gpu__name", flat=True).distinct() if name
    }
    reserved_gpu = next(iter(lot_gpus)) if len(lot_gpus) == 1 else ""
    for item in campaign.items.only("id", "campaign", "name", "gpu", "config", "status").order_by(
        "id"
    ):
        row = rows.get(item.pk)
        if row is None or item.status in _SKIPPED:
            continue
        hours = float(row.get("forecast_hours") or 0.0)
        if hours <= 0:
            continue
        cfg = item.config if isinstance(item.config, dict) else {}
        precision = cfg.get("precision", "bf16")
        if precision not in catalog.PRECISIONS:
            precision = "bf16"
        calculator = row.get("calculator") or {}
        memory = calculator.get("memory_per_device_bytes")
        source = row.get("time_source", "assumed")
        key = f"item:{item.pk}"
        pilot_gpu = item.gpu or reserved_gpu
        if source == "pilot" and pilot_gpu:
            measured_on[key] = catalog.canonical_name(pilot_gpu) or pilot_gpu
        works.append(
            options.Work(
                key=key,
                name=item.name,
                # Where the hours were measured, so other GPUs get them projected.
                gpu=item.gpu or (reserved_gpu if source == "pilot" else "") or None,
                wall_hours=hours,
                gpus=_gpus(cfg.get("gpus")),
                precision=precision,
                memory_bytes_per_gpu=int(memory) if isinstance(memory, int | float) else None,
                time_source=source if source in ("pilot", "observed") else "assumed",
            )
        )
    return works, measured_on


def campaign_hardware_options(
    campaign: Campaign,
    works: tuple[list[options.Work], dict[str, str]] | None = None,
) -> tuple[list[options.HardwareOption], list[options.Excluded]]:
    """Every catalog GPU that fits all the campaign's remaining items, ranked by total cost: the
    cheaper of its rental lots and its cheapest published hourly rate (`works`:
    `campaign_works(campaign)`, when the caller read it already)."""
    found, measured_on = works if works is not None else campaign_works(campaign)
    gpus = [row.as_spec() for row in GpuModel.objects.order_by("name")]
    offers = [
        plan_offer(plan)
        for plan in RentalPlan.objects.select_related("gpu").filter(currency=campaign.currency)
    ]
    return options.rank_options(
        found,
        gpus,
        offers=offers,
        rate_offers=published_rate_offers(campaign.currency),
        currency=campaign.currency,
        window_hours=float(campaign.window_hours),
        measured_on=measured_on,
    )


def published_rate_offers(currency: str) -> list[RateOffer]:
    """Every published hourly rate in ``currency``, by instance size, with its provenance in
    words: the pricing picks per GPU the offer that bills the jobs least (docs/domain.md §24.8)."""
    today = timezone.now().date()
    found: list[RateOffer] = []
    for rate in HourlyRate.objects.select_related("gpu").filter(currency=currency):
        when = "undated" if rate.as_of is None else f"as of {rate.as_of.isoformat()}"
        warning = catalog.price_note(rate.illustrative, rate.as_of, today)
        note = f"{rate.provider}'s published rate, {when}" + (f"; {warning}" if warning else "")
        found.append(RateOffer(rate.gpu.name, rate.rate_per_gpu_hour, rate.gpus_per_instance, note))
    return found
