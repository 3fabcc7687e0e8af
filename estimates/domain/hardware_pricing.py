"""How a hardware option is bought (docs/domain.md §24.8): the cheaper of an hourly rate per GPU
(given per GPU name, else a fallback, else the published offer that bills the works least, the
GPUs rounded up to whole instances) and the cheapest combination of rental lots
(``lot_selection.select_lots``); the work being priced (`Work`) and the choice made (`PlanChoice`).
Pure: no Django, no I/O. Money is Decimal with its currency, to cents.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Literal

from catalog.domain.catalog import GpuModel
from catalog.domain.gpu_names import normalize_gpu
from estimates.domain import formulas, lot_selection
from estimates.domain.hardware_calendar import Calendar
from estimates.domain.rate_offers import RateOffer, cheapest_offer

TimeSource = Literal["pilot", "projected", "assumed", "observed", "calibrated"]
_NO_WINDOW_HOURS = 1e9


@dataclass(frozen=True)
class Work:
    """One piece of work as measured, projected or planned on its own GPU.

    ``wall_hours`` is on ``gpus`` devices of ``gpu`` (None: no GPU stated, hours kept as they
    are everywhere); ``memory_bytes_per_gpu`` None means unknown (then a candidate needs at
    least the memory of ``gpu``, when known).
    """

    key: str
    name: str
    gpu: str | None
    wall_hours: float
    gpus: int = 1
    precision: str = "bf16"
    memory_bytes_per_gpu: int | None = None
    time_source: TimeSource = "assumed"


@dataclass(frozen=True)
class PlanChoice:
    """How the option is bought: ``hourly`` at a rate per GPU-hour, or ``lots``."""

    kind: Literal["hourly", "lots", "none"]
    description: str
    rate_per_gpu_hour: Decimal | None = None
    lots: tuple[str, ...] = ()


def _hourly(gpu_hours: float, rate: Decimal, currency: str) -> tuple[PlanChoice, formulas.Money]:
    amount = formulas.hourly_cost(1, gpu_hours, rate)
    choice = PlanChoice(
        "hourly", f"hourly at {rate} {currency} per GPU-hour", rate_per_gpu_hour=rate
    )
    return choice, formulas.Money(amount, currency)


def _lots(
    works: Sequence[tuple[Work, float]],
    candidate: GpuModel,
    offers: Sequence[lot_selection.RentalPlanOffer],
    window_hours: float,
) -> tuple[PlanChoice, formulas.Money, bool] | None:
    mine = [o for o in offers if normalize_gpu(o.gpu) == normalize_gpu(candidate.name)]
    # A campaign stored with no window (0 h, before the rule refused it) fits no lot.
    if not math.isfinite(window_hours) or window_hours <= 0:
        return None
    if not mine or len({o.currency for o in mine}) > 1:
        return None
    items = [
        lot_selection.PlanItem(
            key=work.key,
            machine_hours=hours,
            gpu=candidate.name,
            gpus_needed=work.gpus,
            memory_bytes_per_gpu=work.memory_bytes_per_gpu,
            name=work.name,
        )
        for work, hours in works
    ]
    selection = lot_selection.select_lots(items, window_hours, mine)
    if selection.unplaced:
        return None
    counts: dict[str, int] = {}
    for lot in selection.lots:
        counts[lot.plan.name] = counts.get(lot.plan.name, 0) + 1
    names = tuple(f"{n} x {plan}" for plan, n in counts.items())
    choice = PlanChoice("lots", f"rental lots: {', '.join(names)}", lots=names)
    return choice, formulas.Money(selection.total, selection.currency), selection.feasible


@dataclass(frozen=True)
class Pricing:
    """How options are priced: hourly rates by normalized GPU name, a fallback, rental lots."""

    rates: Mapping[str, Decimal]
    fallback_rate: Decimal | None
    currency: str
    window_hours: float | None
    offers: Sequence[lot_selection.RentalPlanOffer]
    rate_notes: Mapping[str, str]
    rate_instances: Mapping[str, int]
    offers_by_gpu: Mapping[str, tuple[RateOffer, ...]] = field(default_factory=dict)
    calendar: Calendar | None = None


def cheapest(
    candidate: GpuModel,
    placed: Sequence[tuple[Work, float]],
    wall: float,
    gpu_hours: float,
    pricing: Pricing,
) -> tuple[PlanChoice, formulas.Money | None, bool | None]:
    """The cheaper of the hourly rate and the rental lots, or no plan without any price."""
    window_hours = pricing.window_hours
    priced = _hourly_price(candidate, placed, wall, gpu_hours, pricing)
    if pricing.offers and placed:
        # Without a window, lots are only bounded by their own durations.
        lots_window = window_hours if window_hours is not None else _NO_WINDOW_HOURS
        lots = _lots(placed, candidate, pricing.offers, lots_window)
        if lots is not None:
            choice, money, feasible = lots
            priced.append((choice, money, feasible if window_hours is not None else None))
    if priced:
        priced.sort(key=lambda p: p[1].amount)
        plan, money, fits_window = priced[0]
        return plan, money, fits_window
    plan = PlanChoice("none", "no price known for this GPU: give a rate per GPU-hour")
    return plan, None, None if window_hours is None else wall <= window_hours


def _billed_gpu_hours(placed: Sequence[tuple[Work, float]], instance: int) -> float:
    """GPU-hours paid for: each work's GPUs rounded up to whole instances of ``instance``."""
    return sum(h * math.ceil(w.gpus / instance) * instance for w, h in placed)


def _hourly_price(
    candidate: GpuModel,
    placed: Sequence[tuple[Work, float]],
    wall: float,
    gpu_hours: float,
    pricing: Pricing,
) -> list[tuple[PlanChoice, formulas.Money, bool | None]]:
    key = normalize_gpu(candidate.name)
    own_rate = pricing.rates.get(key)
    offers = pricing.offers_by_gpu.get(key, ()) if own_rate is None else ()
    if offers:
        found = _offer_price(offers, placed, wall, pricing)
        return [] if found is None else [found]
    rate = own_rate if own_rate is not None else pricing.fallback_rate
    if rate is None:
        return []
    instance = pricing.rate_instances.get(key, 1) if own_rate else 1
    billed = _billed_gpu_hours(placed, instance) if placed and instance > 1 else gpu_hours
    try:
        choice, money = _hourly(billed, rate, pricing.currency)
    except formulas.EstimateInputError:
        return []  # beyond the largest amount handled: not a usable price
    note = _rate_note(
        pricing.rate_notes.get(key) if own_rate is not None else None,
        billed=billed,
        gpu_hours=gpu_hours,
        instance=instance,
    )
    choice = _said(choice, rate, fallback=own_rate is None, note=note)
    window = pricing.window_hours
    return [(choice, money, None if window is None else wall <= window)]


def _said(choice: PlanChoice, rate: Decimal, *, fallback: bool, note: str | None) -> PlanChoice:
    """The hourly choice with the fallback rate said, then the note in brackets."""
    if fallback:
        # Said, because one rate for every card favours the fastest card.
        choice = PlanChoice(
            "hourly",
            f"{choice.description} (the fallback rate: no rate given for this GPU)",
            rate_per_gpu_hour=rate,
        )
    if note:
        choice = PlanChoice("hourly", f"{choice.description} ({note})", rate_per_gpu_hour=rate)
    return choice


def _rate_note(note: str | None, *, billed: float, gpu_hours: float, instance: int) -> str | None:
    """The rate's own note, then the whole instances billed when they exceed the GPU-hours used."""
    if billed > gpu_hours:
        # Said, because the rate alone would price the GPUs the job does not use at nothing.
        billing = f"rented {instance} GPUs at a time: {billed:,.4g} GPU-hours billed"
        note = f"{note}; {billing}" if note else billing
    return note


def _offer_price(
    offers: Sequence[RateOffer],
    placed: Sequence[tuple[Work, float]],
    wall: float,
    pricing: Pricing,
) -> tuple[PlanChoice, formulas.Money, bool | None] | None:
    """The published offer that bills the works least, with its provenance and billing said."""
    found = cheapest_offer(offers, [(w.gpus, h) for w, h in placed])
    if found is None:
        return None
    offer, amount, billed = found
    note = offer.note
    if billed > sum(h * w.gpus for w, h in placed):
        billing = f"rented {offer.gpus_per_instance} GPUs at a time: {billed:,.4g} GPU-hours billed"
        note = f"{note}; {billing}" if note else billing
    description = f"hourly at {offer.rate_per_gpu_hour} {pricing.currency} per GPU-hour"
    choice = PlanChoice(
        "hourly",
        f"{description} ({note})" if note else description,
        rate_per_gpu_hour=offer.rate_per_gpu_hour,
    )
    window = None if pricing.window_hours is None else wall <= pricing.window_hours
    return choice, formulas.Money(amount, pricing.currency), window
