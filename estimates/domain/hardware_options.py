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
* How an option is priced (rates, published offers, lots) is estimates/domain/hardware_pricing.py.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import TypeVar

from catalog.domain import catalog
from catalog.domain.catalog import GpuModel
from catalog.domain.gpu_names import normalize_gpu
from estimates.domain import formulas
from estimates.domain import lot_selection as plans
from estimates.domain.formulas.projection import speedup
from estimates.domain.hardware_calendar import REST, Calendar, measured_words
from estimates.domain.hardware_pricing import PlanChoice, Pricing, TimeSource, Work, cheapest
from estimates.domain.projection_words import basis_words, range_kind
from estimates.domain.rate_offers import RateOffer, offers_by_gpu

_V = TypeVar("_V")
__all__ = [
    "Excluded",
    "HardwareOption",
    "PlanChoice",
    "TimeSource",
    "Work",
    "rank_options",
    "ranking",
]


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
    works_on: Mapping[str, Sequence[Work]] | None = None,
) -> tuple[list[HardwareOption], list[Excluded]]:
    """Every GPU of ``gpus`` that fits all the ``works``, priced and ranked by total cost.

    Source: the projection rule above (same utilization carried to another peak, as
    ``formulas.wall_hours`` assumes) and ``plans.select_lots`` / ``formulas.hourly_cost`` for
    the price. ``rates`` maps a GPU name to its price per GPU-hour (``rate_notes`` to where that
    price comes from, said in the plan's description; ``rate_instances`` to the GPUs rented
    together at it); ``measured_on`` maps a work key to the GPU its pilot ran on (its time is
    "pilot" there, "projected" elsewhere). The works run one after another: wall hours add up,
    and ``fits_window`` compares them with the window (for lots, the selection's own
    feasibility); the options that fit come first. ``rate_offers`` are published rates by
    instance size: a GPU without a rate in ``rates`` is billed at the offer that costs its works
    least, the GPUs rounded up to that offer's instances (a one-GPU job takes the plan that
    sells one GPU). With a campaign's ``calendar``, an option fits the window when the
    campaign's calendar with the works on that GPU does (docs/domain.md §7.7), and the
    calendar's other machine stages still to come are rented and priced with it. ``works_on``
    gives a GPU its own works (the calculator's job estimated on each GPU) in place of
    ``works``.
    """
    by_name = {normalize_gpu(g.name): g for g in gpus}
    pricing = Pricing(
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
        mine = (works_on or {}).get(candidate.name, works)
        placed, reasons, sources = _place(mine, by_name, candidate)
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
    """The words saying where the option's time comes from: measured here, assumed, projected."""
    if source in ("pilot", "observed", "calibrated"):
        here = any(normalize_gpu(g) == normalize_gpu(candidate.name) for g in measured.values())
        return measured_words(candidate.name, [w for w, _ in placed], here)
    if source != "projected":
        return _assumed_words(candidate, placed, measured)
    return _projected_words(candidate, placed, measured)


def _assumed_words(
    candidate: GpuModel, placed: Sequence[tuple[Work, float]], measured: Mapping[str, str]
) -> str:
    # A pilot on this very GPU still measured some work: name it, the rest is the assumption.
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


def _projected_words(
    candidate: GpuModel, placed: Sequence[tuple[Work, float]], measured: Mapping[str, str]
) -> str:
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
    pricing: Pricing,
    measured: Mapping[str, str],
) -> HardwareOption:
    wall = sum(h for _, h in placed)
    gpu_hours = sum(h * w.gpus for w, h in placed)
    source = _time_source(sources)
    rented = _with_calendar(placed, pricing.calendar)
    rest = sum(h for w, h in rented if w.key == REST)
    plan, total, fits_window = cheapest(candidate, rented, wall + rest, gpu_hours + rest, pricing)
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


def ranking(option: HardwareOption) -> tuple[bool, bool, Decimal, float, str]:
    """The options that fit the window first (a cheaper GPU whose calendar overruns the window
    answers another question), each group by ascending total cost; unpriced options last, by
    GPU-hours."""
    amount = option.total_cost.amount if option.total_cost is not None else Decimal(0)
    return (option.total_cost is None, not option.fits_window, amount, option.gpu_hours, option.gpu)
