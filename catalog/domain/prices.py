"""Prices in the catalog: rental plans sold per lot and providers' published hourly rates.

Rules and units (docs/domain.md §9, §24.8): pure module, no Django, no I/O. Money is
``decimal.Decimal`` with its currency, never a float. A rental plan's price is per lot (a lot
that includes two GPUs costs its price once); an hourly rate is per GPU-hour of an instance of
``gpus_per_instance`` GPUs rented whole. Every price carries its source and the date it was
read (``as_of``); the answers say when one is illustrative, undated or older than a year.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from decimal import Decimal
from typing import Final


@dataclass(frozen=True)
class RentalPlanSpec:
    """A rental plan sold per lot: ``price`` buys ``gpus_per_lot`` GPUs for ``duration_hours``."""

    provider: str
    name: str
    gpu: str
    gpus_per_lot: int
    duration_hours: int
    price: Decimal
    currency: str
    illustrative: bool = False
    note: str = ""
    # docs/domain.md §24.8: where the price comes from, and when it was published (None: no
    # date known, which the answers say).
    source: str = ""
    as_of: date | None = None


_SEED_SOURCE: Final = (
    "IteraGPU catalogue, as the seed states it (docs/domain.md §9); the seed prints no date: "
    "as_of is the day the project read it"
)
# The seed was read into the catalog on this day (the first commit that holds its prices).
SEED_READ_ON: Final = date(2026, 11, 29)

RENTAL_PLANS: Final = (
    # Seed figures (IteraGPU catalogue, docs/domain.md §9): one RTX 4090 per lot.
    RentalPlanSpec(
        "IteraGPU",
        "RTX 4090, 3 days",
        "RTX-4090",
        1,
        72,
        Decimal("47.14"),
        "USD",
        source=_SEED_SOURCE,
        as_of=SEED_READ_ON,
    ),
    RentalPlanSpec(
        "IteraGPU",
        "RTX 4090, 7 days",
        "RTX-4090",
        1,
        168,
        Decimal("110.00"),
        "USD",
        source=_SEED_SOURCE,
        as_of=SEED_READ_ON,
    ),
    RentalPlanSpec(
        "IteraGPU",
        "RTX 4090, 30 days",
        "RTX-4090",
        1,
        720,
        Decimal("390.00"),
        "USD",
        source=_SEED_SOURCE,
        as_of=SEED_READ_ON,
    ),
    RentalPlanSpec(
        "IteraGPU",
        "2x B200, 3 days",
        "B200",
        2,
        72,
        Decimal("648.00"),
        "USD",
        illustrative=True,
        note=(
            "Illustrative catalogue figure, not from the seed: the seed only says a B200 lot "
            "includes two GPUs and is priced per lot. 648.00 USD is 2 GPUs x 72 h x 4.50 USD."
        ),
        source="illustrative (made up for the demo)",
        as_of=SEED_READ_ON,
    ),
)


@dataclass(frozen=True)
class HourlyRateSpec:
    """A provider's published on-demand price per GPU-hour, with its source and date."""

    provider: str
    gpu: str
    rate_per_gpu_hour: Decimal
    currency: str
    source: str
    as_of: date | None
    illustrative: bool = False
    # GPUs rented together at this rate: a job on fewer pays for all of them.
    gpus_per_instance: int = 1


# docs/domain.md §24.8. Prices change often: each carries the date it was read, and answers
# say when it is older than a year. Per-GPU figures are the 8-GPU instance price / 8.
HOURLY_RATES: Final = (
    HourlyRateSpec(
        "Lambda",
        "H100-SXM",
        Decimal("2.99"),
        "USD",
        "Lambda pricing page, on-demand 8x NVIDIA H100 SXM 80GB: 2.99 USD per GPU-hour",
        date(2025, 1, 15),
        gpus_per_instance=8,
    ),
    HourlyRateSpec(
        "AWS",
        "H100-SXM",
        Decimal("12.29"),
        "USD",
        "AWS EC2 on-demand, p5.48xlarge (8x H100 80GB), us-east-1: 98.32 USD per hour / 8; "
        "superseded by AWS's June 2025 cut of P5 on-demand prices (up to 45%)",
        date(2024, 6, 1),
        gpus_per_instance=8,
    ),
    HourlyRateSpec(
        "CoreWeave",
        "H200",
        Decimal("6.31"),
        "USD",
        "CoreWeave pricing page, NVIDIA HGX H200 (8 GPUs): 50.44 USD per hour / 8",
        date(2025, 1, 15),
        gpus_per_instance=8,
    ),
    # A plan that sells one GPU: a one-GPU job is billed as one, not as an 8-GPU instance.
    HourlyRateSpec(
        "Lambda",
        "H100-SXM",
        Decimal("3.78"),
        "USD",
        "Lambda pricing page, on-demand 1x NVIDIA H100 SXM: 3.78 USD per GPU-hour (as listed "
        "in techbytes.app's 'Serverless GPU Pricing Matrix', prices verified 2026-05-07)",
        date(2026, 5, 7),
        gpus_per_instance=1,
    ),
)


# A price older than this is called stale in the answers (docs/domain.md §24.8).
STALE_PRICE_DAYS: Final = 365


def price_note(illustrative: bool, as_of: date | None, today: date) -> str:
    """Plain words on a price's provenance: illustrative, undated, or older than a year ("" when
    none applies). ``today`` is passed in: this module reads no clock."""
    if illustrative:
        return "illustrative: not a provider's published price"
    if as_of is None:
        return "no publication date known: check the provider's current price"
    age = (today - as_of).days
    if age > STALE_PRICE_DAYS:
        return f"published {as_of.isoformat()}, over a year ago: check the current price"
    return ""
