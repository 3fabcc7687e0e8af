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
* Price: an hourly rate per GPU (given per GPU name, else a fallback) costs GPUs x hours x rate;
  rental plans cost the cheapest lot combination (``plans.select_lots``, priced per lot). The
  cheaper of the two is the option's plan. Money is Decimal with its currency, to cents.
* Ranking: ascending total cost; options without any price come last, by GPU-hours.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Literal

from catalog.domain import catalog
from catalog.domain.catalog import GpuModel
from catalog.domain.gpu_names import normalize_gpu
from estimates.domain import formulas
from estimates.domain import lot_selection as plans

TimeSource = Literal["pilot", "projected", "assumed", "observed"]
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
    return work.wall_hours * own.peak_flops[work.precision] / candidate.peak_flops[work.precision]


def _fits(work: Work, own: GpuModel | None, candidate: GpuModel) -> bool:
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


def rank_options(  # noqa: C901
    works: Sequence[Work],
    gpus: Sequence[GpuModel],
    *,
    offers: Sequence[plans.RentalPlanOffer] = (),
    rates: Mapping[str, Decimal] | None = None,
    fallback_rate: Decimal | None = None,
    currency: str = "USD",
    window_hours: float | None = None,
    measured_on: Mapping[str, str] | None = None,
) -> tuple[list[HardwareOption], list[Excluded]]:
    """Every GPU of ``gpus`` that fits all the ``works``, priced and ranked by total cost.

    Source: the projection rule above (same utilization carried to another peak, as
    ``formulas.wall_hours`` assumes) and ``plans.select_lots`` / ``formulas.hourly_cost`` for
    the price. ``rates`` maps a GPU name to its price per GPU-hour; ``measured_on`` maps a work
    key to the GPU its pilot ran on (its time is "pilot" there, "projected" elsewhere). The
    works run one after another: wall hours add up, and ``fits_window`` compares them with the
    window (for lots, the selection's own feasibility).
    """
    by_name = {normalize_gpu(g.name): g for g in gpus}
    # A rate may name the GPU by an alias ("H100-80GB" for the H100 SXM).
    normalized_rates = {
        normalize_gpu(catalog.canonical_name(k) or k): v for k, v in (rates or {}).items()
    }
    measured = measured_on or {}
    options: list[HardwareOption] = []
    excluded: list[Excluded] = []
    for candidate in gpus:
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
                reasons.append(
                    f"{work.name}: does not fit in {candidate.memory_bytes / 2**30:g} GiB"
                )
                continue
            placed.append((work, hours))
            same = own is not None and own.name == candidate.name
            if same or own is None:
                sources.add(work.time_source)  # "projected" when the caller projected it
            else:
                sources.add("projected")
        if reasons:
            shown = "; ".join(reasons[:3]) + (
                f" (and {len(reasons) - 3} more)" if len(reasons) > 3 else ""
            )
            excluded.append(Excluded(candidate.name, shown))
            continue
        wall = sum(h for _, h in placed)
        gpu_hours = sum(h * w.gpus for w, h in placed)
        count = max((w.gpus for w, _ in placed), default=1)
        source: TimeSource
        if sources == {"pilot"} or (sources and sources <= {"pilot", "observed"}):
            source = "pilot"
        elif "projected" in sources:
            source = "projected"
        elif sources == {"observed"}:
            source = "observed"
        else:
            source = "assumed"
        pilots_elsewhere = sorted(
            {
                measured[w.key]
                for w, _ in placed
                if w.key in measured and measured[w.key] != candidate.name
            }
        )
        if source == "projected":
            origin = f" measured on the {', '.join(pilots_elsewhere)}" if pilots_elsewhere else ""
            assumption = (
                f"Projected: the utilization{origin} is assumed to carry over to the "
                f"{candidate.name}'s peak FLOP/s at the same precision (memory bandwidth, "
                "interconnect and kernels may differ)."
            )
        elif source == "pilot":
            assumption = f"Measured by a pilot on the {candidate.name}."
        else:
            assumption = "Assumed utilization of peak FLOP/s; no pilot on this GPU."

        priced: list[tuple[PlanChoice, formulas.Money, bool | None]] = []
        own_rate = normalized_rates.get(normalize_gpu(candidate.name))
        rate = own_rate if own_rate is not None else fallback_rate
        if rate is not None:
            try:
                choice, money = _hourly(gpu_hours, rate, currency)
                if own_rate is None:
                    # Said, because one rate for every card favours the fastest card.
                    choice = PlanChoice(
                        "hourly",
                        f"{choice.description} (the fallback rate: no rate given for this GPU)",
                        rate_per_gpu_hour=rate,
                    )
                priced.append(
                    (choice, money, None if window_hours is None else wall <= window_hours)
                )
            except formulas.EstimateInputError:
                pass  # beyond the largest amount handled: not a usable price
        if offers and placed:
            # Without a window, lots are only bounded by their own durations.
            lots_window = window_hours if window_hours is not None else _NO_WINDOW_HOURS
            lots = _lots(placed, candidate, offers, lots_window)
            if lots is not None:
                choice, money, feasible = lots
                priced.append((choice, money, feasible if window_hours is not None else None))
        if priced:
            priced.sort(key=lambda p: p[1].amount)
            plan, money, fits_window = priced[0]
            total: formulas.Money | None = money
        else:
            plan = PlanChoice("none", "no price known for this GPU: give a rate per GPU-hour")
            total = None
            fits_window = None if window_hours is None else wall <= window_hours
        options.append(
            HardwareOption(
                candidate.name,
                count,
                True,
                wall,
                gpu_hours,
                source,
                assumption,
                plan,
                total,
                fits_window,
            )
        )
    options.sort(key=ranking)
    return options, excluded


def ranking(option: HardwareOption) -> tuple[bool, Decimal, float, str]:
    """Ascending total cost; unpriced options last, by GPU-hours."""
    amount = option.total_cost.amount if option.total_cost is not None else Decimal(0)
    return (option.total_cost is None, amount, option.gpu_hours, option.gpu)
