"""Published hourly rates by instance size, and the one that bills a set of jobs least.

Rule (docs/domain.md §24.8): a provider may rent a GPU alone or only in instances of several
(an 8-GPU node); each job's GPUs are rounded up to whole instances of the offer, so a one-GPU
job is billed by the offer that sells one GPU when that costs less than a whole node. Pure:
no Django, no I/O. Units: ``Decimal`` money per GPU-hour, hours, GPU counts.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal

from catalog.domain import catalog
from catalog.domain.gpu_names import normalize_gpu
from estimates.domain import formulas


@dataclass(frozen=True)
class RateOffer:
    """A published rate per GPU-hour of an instance of ``gpus_per_instance`` GPUs rented whole;
    ``note`` says whose price it is and when it was read."""

    gpu: str
    rate_per_gpu_hour: Decimal
    gpus_per_instance: int = 1
    note: str = ""


def offers_by_gpu(offers: Sequence[RateOffer]) -> dict[str, tuple[RateOffer, ...]]:
    """The offers grouped by normalized GPU name (an alias counts as its card)."""
    grouped: dict[str, tuple[RateOffer, ...]] = {}
    for offer in offers:
        key = normalize_gpu(catalog.canonical_name(offer.gpu) or offer.gpu)
        grouped[key] = (*grouped.get(key, ()), offer)
    return grouped


def billed_gpu_hours(jobs: Sequence[tuple[int, float]], instance: int) -> float:
    """GPU-hours paid for: each job's GPUs rounded up to whole instances, times its hours."""
    size = max(1, instance)
    return sum(hours * math.ceil(gpus / size) * size for gpus, hours in jobs)


def cheapest_offer(
    offers: Sequence[RateOffer], jobs: Sequence[tuple[int, float]]
) -> tuple[RateOffer, Decimal, float] | None:
    """The offer that bills ``jobs`` (GPUs, hours) least, its amount and the billed GPU-hours;
    None when none gives a usable amount. Ties go to the smaller instance."""
    priced: list[tuple[Decimal, int, RateOffer, float]] = []
    for offer in offers:
        billed = billed_gpu_hours(jobs, offer.gpus_per_instance)
        try:
            amount = formulas.hourly_cost(1, billed, offer.rate_per_gpu_hour)
        except formulas.EstimateInputError:
            continue  # beyond the largest amount handled: not a usable price
        priced.append((amount, offer.gpus_per_instance, offer, billed))
    if not priced:
        return None
    amount, _, offer, billed = min(priced, key=lambda p: (p[0], p[1]))
    return offer, amount, billed
