"""Which GPU and which plan: every accelerator that fits the work, priced and ranked.

Rules (docs/api.md, "hardware-options"; docs/domain.md §10: the most common error is choosing the
most powerful hardware without comparing its price against the real load):

* Pure module: no Django, no I/O. The views turn the catalog rows, rental plans and campaign
  items into the values below.
* Time on another GPU is *projected*: the work's measured (or assumed) utilization is carried to
  that GPU's peak FLOP/s at the same precision, i.e. hours x peak(own) / peak(other). It is an
  assumption (memory bandwidth, interconnect and kernels differ), and each option says so.
* A GPU without the work's precision, or with less memory per device than the work needs,
  is not an option; it is listed with the reason instead.
* Price: an hourly rate per GPU (given per GPU name, else a fallback) costs GPUs x hours x rate,
  the GPUs rounded up to the provider's instance size where it rents them together (an 8-GPU
  instance bills eight for a one-GPU job, docs/domain.md §24.8);
  rental plans cost the cheapest lot combination (``plans.select_lots``, priced per lot). The
  cheaper of the two is the option's plan. Money is Decimal with its currency, to cents.
* Ranking: ascending total cost; options without any price come last, by GPU-hours.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Literal, TypeVar

from catalog.domain import catalog
from catalog.domain.catalog import GpuModel
from catalog.domain.gpu_names import normalize_gpu
from estimates.domain import formulas
from estimates.domain import lot_selection as plans
from estimates.domain.formulas.projection import speedup
from estimates.domain.hardware_calendar import REST, Calendar, measured_words
from estimates.domain.projection_words import basis_words, range_kind
from estimates.domain.rate_offers import RateOffer, cheapest_offer, offers_by_gpu

TimeSource = Literal["pilot", "projected", "assumed", "observed", "calibrated"]
_V = TypeVar("_V")
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


@dataclass(frozen=True)
class HardwareOption:
    gpu: str
    count: int
    fits_in_memory: bool
    wall_hours: float
    gpu_hours: float
    time_source: TimeSource
    assumption: str
    plan: PlanChoice
    total_cost: formulas.Money | None
    fits_window: bool | None
    # docs/domain.md §24.12: the interval kind the time rests on (its basis, its node scope).
    range_kind: str = "time.assumed"
    # The campaign calendar's other machine stages still to come (setup, loading, retrieval),
    # rented and priced with the option, not counted in its work or GPU-hours (§7.7).
    other_machine_hours: float = 0.0
    # The campaign's calendar with the remaining items on this GPU (None: no campaign).
    calendar_hours: float | None = None


@dataclass(frozen=True)
class Excluded:
    gpu: str
    reason: str


def _hours_on(work: Work, own: GpuModel | None, candidate: GpuModel) -> float | None:
    """The work's wall hours on ``candidate`` (same GPU count), or None without the precision."""
    if not candidate.supports(work.precision):
        return None
    if own is None or own.name == candidate.name:
        return work.wall_hours
    if not own.supports(work.precision):
        return work.wall_hours
    # A measured per-GPU ratio where one is published, else the roofline (§24.11).
    return work.wall_hours / speedup(own, candidate, work.precision).ratio


def _fits(work: Work, own: GpuModel | None, candidate: GpuModel) -> bool:
    if work.time_source == "pilot" and own is not None and own.name == candidate.name:
        return True  # the pilot ran on this GPU: it is always an option (docs/domain.md §24.6)
    if work.memory_bytes_per_gpu is not None:
        return work.memory_bytes_per_gpu <= candidate.memory_bytes
    return own is None or own.memory_bytes <= candidate.memory_bytes


def _hourly(gpu_hours: float, rate: Decimal, currency: str) -> tuple[PlanChoice, formulas.Money]:
    amount = formulas.hourly_cost(1, gpu_hours, rate)
    choice = PlanChoice(
        "hourly", f"hourly at {rate} {currency} per GPU-hour", rate_per_gpu_hour=rate
    )
    return choice, formulas.Money(amount, currency)


def _lots(
    works: Sequence[tuple[Work, float]],
    candidate: GpuModel,
    offers: Sequence[plans.RentalPlanOffer],
    window_hours: float,
) -> tuple[PlanChoice, formulas.Money, bool] | None:
    mine = [o for o in offers if normalize_gpu(o.gpu) == normalize_gpu(candidate.name)]
    # A campaign stored with no window (0 h, before the rule refused it) fits no lot.
    if not math.isfinite(window_hours) or window_hours <= 0:
        return None
    if not mine or len({o.currency for o in mine}) > 1:
        return None
    items = [
        plans.PlanItem(
            key=work.key,
            machine_hours=hours,
            gpu=candidate.name,
            gpus_needed=work.gpus,
            memory_bytes_per_gpu=work.memory_bytes_per_gpu,
            name=work.name,
        )
        for work, hours in works
    ]
    selection = plans.select_lots(items, window_hours, mine)
    if selection.unplaced:
        return None
    counts: dict[str, int] = {}
    for lot in selection.lots:
        counts[lot.plan.name] = counts.get(lot.plan.name, 0) + 1
    names = tuple(f"{n} x {plan}" for plan, n in counts.items())
    choice = PlanChoice("lots", f"rental lots: {', '.join(names)}", lots=names)
    return choice, formulas.Money(selection.total, selection.currency), selection.feasible


@dataclass(frozen=True)
class _Pricing:
    """How options are priced: hourly rates by normalized GPU name, a fallback, rental lots."""

    rates: Mapping[str, Decimal]
    fallback_rate: Decimal | None
    currency: str
    window_hours: float | None
    offers: Sequence[plans.RentalPlanOffer]
    rate_notes: Mapping[str, str]
    rate_instances: Mapping[str, int]
    offers_by_gpu: Mapping[str, tuple[RateOffer, ...]] = field(default_factory=dict)
    calendar: Calendar | None = None


def rank_options(
    works: Sequence[Work],
    gpus: Sequence[GpuModel],
    *,
    offers: Sequence[plans.RentalPlanOffer] = (),
    rates: Mapping[str, Decimal] | None = None,
    fallback_rate: Decimal | None = None,
    currency: str = "USD",
    window_hours: float | None = None,
    measured_on: Mapping[str, str] | None = None,
    rate_notes: Mapping[str, str] | None = None,
    rate_instances: Mapping[str, int] | None = None,
    rate_offers: Sequence[RateOffer] = (),
    calendar: Calendar | None = None,
) -> tuple[list[HardwareOption], list[Excluded]]:
    """Every GPU of ``gpus`` that fits all the ``works``, priced and ranked by total cost.

    Source: the projection rule above (same utilization carried to another peak, as
    ``formulas.wall_hours`` assumes) and ``plans.select_lots`` / ``formulas.hourly_cost`` for
    the price. ``rates`` maps a GPU name to its price per GPU-hour (``rate_notes`` to where
    that price comes from, said in the plan's description; ``rate_instances`` to the GPUs rented
    together at it); ``measured_on`` maps a work
    key to the GPU its pilot ran on (its time is "pilot" there, "projected" elsewhere). The
    works run one after another: wall hours add up, and ``fits_window`` compares them with the
    window (for lots, the selection's own feasibility). ``rate_offers`` are published rates
    by instance size: a GPU without a rate in ``rates`` is billed at the offer that costs its
    works least, the GPUs rounded up to that offer's instances (a one-GPU job takes the plan
    that sells one GPU). With a campaign's ``calendar``, an option fits the window when the
    campaign's calendar with the works on that GPU does (docs/domain.md §7.7), and the calendar's
    other machine stages still to come are rented and priced with it.
    """
    by_name = {normalize_gpu(g.name): g for g in gpus}
    pricing = _Pricing(
        rates=_by_gpu(rates),
        fallback_rate=fallback_rate,
        currency=currency,
        window_hours=window_hours,
        offers=offers,
        rate_notes=_by_gpu(rate_notes),
        rate_instances=_by_gpu(rate_instances),
        offers_by_gpu=offers_by_gpu(rate_offers),
        calendar=calendar,
    )
    options: list[HardwareOption] = []
    excluded: list[Excluded] = []
    for candidate in gpus:
        placed, reasons, sources = _place(works, by_name, candidate)
        if reasons:
            excluded.append(Excluded(candidate.name, _reasons_text(reasons)))
            continue
        options.append(_option(candidate, placed, sources, pricing, measured_on or {}))
    options.sort(key=ranking)
    return options, excluded


def _by_gpu(values: Mapping[str, _V] | None) -> dict[str, _V]:
    # A rate may name the GPU by an alias ("H100-80GB" for the H100 SXM).
    return {normalize_gpu(catalog.canonical_name(k) or k): v for k, v in (values or {}).items()}


def _place(
    works: Sequence[Work], by_name: Mapping[str, GpuModel], candidate: GpuModel
) -> tuple[list[tuple[Work, float]], list[str], set[TimeSource]]:
    """Each work's hours on ``candidate``, the reasons it cannot run some, the time sources."""
    placed: list[tuple[Work, float]] = []
    reasons: list[str] = []
    sources: set[TimeSource] = set()
    for work in works:
        own = by_name.get(normalize_gpu(work.gpu)) if work.gpu else None
        hours = _hours_on(work, own, candidate)
        if hours is None:
            reasons.append(f"{work.name}: no {work.precision} peak")
            continue
        if not _fits(work, own, candidate):
            reasons.append(f"{work.name}: does not fit in {candidate.memory_bytes / 2**30:g} GiB")
            continue
        placed.append((work, hours))
        same = own is not None and own.name == candidate.name
        if same or own is None:
            sources.add(work.time_source)  # "projected" when the caller projected it
        else:
            sources.add("projected")
    return placed, reasons, sources


def _reasons_text(reasons: Sequence[str]) -> str:
    more = f" (and {len(reasons) - 3} more)" if len(reasons) > 3 else ""
    return "; ".join(reasons[:3]) + more


def _time_source(sources: set[TimeSource]) -> TimeSource:
    if "projected" in sources:
        return "projected"
    for source in ("observed", "pilot", "calibrated"):
        if source in sources:
            return source
    return "assumed"


def _assumption(
    source: TimeSource,
    candidate: GpuModel,
    placed: Sequence[tuple[Work, float]],
    measured: Mapping[str, str],
) -> str:
    if source in ("pilot", "observed", "calibrated"):
        here = any(normalize_gpu(g) == normalize_gpu(candidate.name) for g in measured.values())
        return measured_words(candidate.name, [w for w, _ in placed], here)
    if source != "projected":
        piloted_here = [
            w.name
            for w, _ in placed
            if w.key in measured and normalize_gpu(measured[w.key]) == normalize_gpu(candidate.name)
        ]
        if piloted_here:
            return (
                f"Measured by a pilot on the {candidate.name} for {', '.join(piloted_here)}; "
                "assumed utilization of peak FLOP/s for the rest."
            )
        return "Assumed utilization of peak FLOP/s; no pilot on this GPU."
    elsewhere = sorted(
        {
            measured[w.key]
            for w, _ in placed
            if w.key in measured and measured[w.key] != candidate.name
        }
    )
    origin = f" measured on the {', '.join(elsewhere)}" if elsewhere else ""
    bases = sorted(
        {basis_words(measured.get(w.key) or w.gpu, w.precision, candidate) for w, _ in placed}
    )
    how = "; ".join(b for b in bases if b) or "the peaks' ratio"
    return (
        f"Projected: the time{origin} carried to the {candidate.name} by {how} (docs/domain.md "
        "§24.11; kernels and interconnect may still differ)."
    )


def _option(
    candidate: GpuModel,
    placed: Sequence[tuple[Work, float]],
    sources: set[TimeSource],
    pricing: _Pricing,
    measured: Mapping[str, str],
) -> HardwareOption:
    wall = sum(h for _, h in placed)
    gpu_hours = sum(h * w.gpus for w, h in placed)
    source = _time_source(sources)
    rented = _with_calendar(placed, pricing.calendar)
    rest = sum(h for w, h in rented if w.key == REST)
    plan, total, fits_window = _cheapest(candidate, rented, wall + rest, gpu_hours + rest, pricing)
    calendar_hours = None
    if pricing.calendar is not None:
        calendar_hours = pricing.calendar({w.key: h for w, h in placed}).hours
        if pricing.window_hours is not None:
            fits_window = calendar_hours <= pricing.window_hours + 1e-9
    gpus = max((w.gpus for w, _ in placed), default=1)
    return HardwareOption(
        candidate.name,
        gpus,
        True,
        wall,
        gpu_hours,
        source,
        _assumption(source, candidate, placed, measured),
        plan,
        total,
        fits_window,
        range_kind(
            source, candidate, [(w.key, w.gpu, w.precision) for w, _ in placed], measured, gpus
        ),
        rest,
        calendar_hours,
    )


def _with_calendar(
    placed: Sequence[tuple[Work, float]], calendar: Calendar | None
) -> list[tuple[Work, float]]:
    """The works, and the calendar's other machine stages still to come as one more work."""
    out = list(placed)
    if calendar is None:
        return out
    rest = calendar({w.key: h for w, h in placed}).other_machine_hours
    if rest > 0:
        other = Work(key=REST, name="the calendar's other stages", gpu=None, wall_hours=rest)
        out.append((other, rest))
    return out


def _cheapest(
    candidate: GpuModel,
    placed: Sequence[tuple[Work, float]],
    wall: float,
    gpu_hours: float,
    pricing: _Pricing,
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
    pricing: _Pricing,
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
    if own_rate is None:
        # Said, because one rate for every card favours the fastest card.
        choice = PlanChoice(
            "hourly",
            f"{choice.description} (the fallback rate: no rate given for this GPU)",
            rate_per_gpu_hour=rate,
        )
    note = pricing.rate_notes.get(normalize_gpu(candidate.name)) if own_rate is not None else None
    if billed > gpu_hours:
        # Said, because the rate alone would price the GPUs the job does not use at nothing.
        billing = f"rented {instance} GPUs at a time: {billed:,.4g} GPU-hours billed"
        note = f"{note}; {billing}" if note else billing
    if note:
        choice = PlanChoice("hourly", f"{choice.description} ({note})", rate_per_gpu_hour=rate)
    window = pricing.window_hours
    return [(choice, money, None if window is None else wall <= window)]


def _offer_price(
    offers: Sequence[RateOffer],
    placed: Sequence[tuple[Work, float]],
    wall: float,
    pricing: _Pricing,
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


def ranking(option: HardwareOption) -> tuple[bool, Decimal, float, str]:
    """Ascending total cost; unpriced options last, by GPU-hours."""
    amount = option.total_cost.amount if option.total_cost is not None else Decimal(0)
    return (option.total_cost is None, amount, option.gpu_hours, option.gpu)
