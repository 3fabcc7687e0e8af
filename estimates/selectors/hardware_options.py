"""A campaign's hardware options: its remaining items, as forecast, on every catalog GPU.

Reads the campaign's forecast (`estimates.selectors.timeline.campaign_forecast`: pilot,
observed or calibrated hours where there are some) and the items' configs, and ranks with
``estimates.domain.hardware_options.rank_options`` against the rental plans and the catalog's
published hourly rates in the campaign's currency (each hourly option names its provider and
date, docs/domain.md §24.8). "Fits the window" is the campaign's timeline with the remaining
items on that GPU, setup, loading and every other stage included (§7.7): the same calendar the
headline and the lot advice state. Writes nothing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from decimal import Decimal
from typing import Any

from django.utils import timezone

from campaigns.domain import timeline
from campaigns.domain.timeline import TimelineInputs
from campaigns.models import Campaign, ItemStatus
from catalog.domain import catalog
from catalog.models import HourlyRate, RentalPlan
from estimates.domain import forecast
from estimates.domain import hardware_options as options
from estimates.domain.forecast_inputs import Forecast, ItemForecast
from estimates.domain.hardware_calendar import Calendar, CalendarFit
from estimates.domain.hardware_jobs import Inputs, job_on_gpus
from estimates.domain.rate_offers import RateOffer
from estimates.models import plan_offer
from estimates.selectors.forecast_inputs import forecast_inputs
from estimates.selectors.gpus import catalog_gpus

# Done and cut items are not work left to rent hardware for.
_SKIPPED = frozenset({ItemStatus.DONE, ItemStatus.CUT})


def _gpus(value: Any) -> int:
    if isinstance(value, int) and not isinstance(value, bool) and value >= 1:
        return value
    return 1


def _reserved_gpu(campaign: Campaign) -> str:
    # A pilot of an item that names no GPU ran on the campaign's reserved machine: when the
    # lots are all of one GPU model, that is where it was measured.
    lot_gpus = {
        name for name in campaign.lots.values_list("plan__gpu__name", flat=True).distinct() if name
    }
    return next(iter(lot_gpus)) if len(lot_gpus) == 1 else ""


def _work(item: ItemForecast, config: dict[str, Any], reserved_gpu: str) -> options.Work:
    precision = config.get("precision", "bf16")
    if precision not in catalog.PRECISIONS:
        precision = "bf16"
    memory = (item.calculator or {}).get("memory_per_device_bytes")
    measured = item.time_source in ("pilot", "observed", "calibrated")
    source = item.time_source if item.time_source in _SOURCES else "assumed"
    return options.Work(
        key=f"item:{item.id}",
        name=item.name,
        # Where the hours were measured (or observed), so other GPUs get them projected.
        gpu=item.gpu or (reserved_gpu if measured else "") or None,
        wall_hours=item.forecast_hours,
        gpus=_gpus(config.get("gpus")),
        precision=precision,
        memory_bytes_per_gpu=int(memory) if isinstance(memory, int | float) else None,
        time_source=source,  # type: ignore[arg-type]
    )


_SOURCES = frozenset({"pilot", "observed", "calibrated", "assumed"})


@dataclass(frozen=True)
class CampaignWorks:
    """The campaign's remaining works, where their hours were measured, and its calendar."""

    works: list[options.Work]
    measured_on: dict[str, str]
    calendar: Calendar


def _calendar(found: Forecast, inputs: TimelineInputs) -> Calendar:
    """The campaign's timeline with each remaining item's hours on a candidate GPU."""

    def fit(hours_by_key: Mapping[str, float]) -> CalendarFit:
        hours = {
            int(k.split(":", 1)[1]): v for k, v in hours_by_key.items() if k.startswith("item:")
        }
        items = tuple(
            replace(i, forecast_hours=hours.get(i.id, forecast_hours.get(i.id)))
            for i in inputs.items
        )
        line = timeline.build(replace(inputs, items=items))
        rest = sum(
            s.hours
            for s in line.stages
            if s.machine and s.state in ("planned", "running") and s.variant_id not in hours
        )
        return CalendarFit(hours=line.hours, other_machine_hours=rest)

    forecast_hours = {f.id: f.forecast_hours for f in found.items}
    return fit


def campaign_works(campaign: Campaign) -> CampaignWorks:
    """The campaign's remaining items as ``options.Work``, where their hours were measured, and
    its calendar for a candidate GPU."""
    inputs = forecast_inputs(campaign)
    found = forecast.compute(inputs)
    reserved_gpu = _reserved_gpu(campaign)
    configs = {i.id: dict(i.config) for i in inputs.items}
    works: list[options.Work] = []
    measured_on: dict[str, str] = {}
    for item in found.items:
        if item.status in _SKIPPED or item.forecast_hours <= 0:
            continue
        work = _work(item, configs.get(item.id, {}), reserved_gpu)
        if work.time_source != "assumed" and work.gpu:
            measured_on[work.key] = catalog.canonical_name(work.gpu) or work.gpu
        works.append(work)
    return CampaignWorks(works, measured_on, _calendar(found, inputs.timeline))


def campaign_hardware_options(
    campaign: Campaign, works: CampaignWorks | None = None
) -> tuple[list[options.HardwareOption], list[options.Excluded]]:
    """Every catalog GPU that fits all the campaign's remaining items, ranked by total cost: the
    cheaper of its rental lots and its cheapest published hourly rate (`works`:
    `campaign_works(campaign)`, when the caller read it already)."""
    found = works if works is not None else campaign_works(campaign)
    return ranked_options(
        found.works,
        catalog_gpus(),
        currency=campaign.currency,
        window_hours=float(campaign.window_hours),
        measured_on=found.measured_on,
        calendar=found.calendar,
    )


def job_hardware_options(
    data: dict[str, Any],
    *,
    own: catalog.GpuModel,
    pilot_gpu: catalog.GpuModel,
    inputs: Inputs,
) -> tuple[list[options.HardwareOption], list[options.Excluded]]:
    """The calculator's job (validated request ``data``, on its GPU ``own``, its pilot's on
    ``pilot_gpu``) on every catalog GPU, the custom one and the pilot's, ranked as the campaign's
    options are (`ranked_options`); ``inputs`` builds the formulas' input for a GPU."""
    candidates = catalog_gpus()
    if "custom" in data["hardware"]:
        candidates.append(own)
    pilot = data.get("pilot")
    if pilot and all(c.name != pilot_gpu.name for c in candidates):
        candidates.append(pilot_gpu)  # the GPU the pilot ran on is always an option
    job = job_on_gpus(data, candidates, pilot_gpu, inputs)
    cost = data.get("cost") or {}
    ranked, _ = ranked_options(
        (),
        job.gpus,
        works_on=job.works_on,
        currency=cost.get("currency", "USD"),
        rates=dict(data.get("rates") or {}),
        fallback_rate=cost.get("hourly_rate_per_gpu"),
        # The caller's rate first; without one, the catalog's published hourly rates by
        # instance size, with their provenance (docs/domain.md §24.8).
        published=not cost.get("hourly_rate_per_gpu"),
        window_hours=data.get("window_hours"),
        measured_on={"job": pilot_gpu.name} if pilot else None,
    )
    return ranked, job.excluded


def ranked_options(
    works: Sequence[options.Work],
    gpus: Sequence[catalog.GpuModel],
    *,
    currency: str,
    works_on: Mapping[str, Sequence[options.Work]] | None = None,
    rates: Mapping[str, Decimal] | None = None,
    fallback_rate: Decimal | None = None,
    published: bool = True,
    window_hours: float | None = None,
    measured_on: Mapping[str, str] | None = None,
    calendar: Calendar | None = None,
) -> tuple[list[options.HardwareOption], list[options.Excluded]]:
    """The one ranking of hardware options, for the campaign page, its API and the calculator:
    `options.rank_options` with the rental plans in ``currency`` and, when ``published``, the
    catalog's published hourly rates."""
    offers = [
        plan_offer(plan)
        for plan in RentalPlan.objects.select_related("gpu").filter(currency=currency)
    ]
    return options.rank_options(
        works,
        gpus,
        works_on=works_on,
        offers=offers,
        rates=rates,
        fallback_rate=fallback_rate,
        rate_offers=published_rate_offers(currency) if published else (),
        currency=currency,
        window_hours=window_hours,
        measured_on=measured_on,
        calendar=calendar,
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
