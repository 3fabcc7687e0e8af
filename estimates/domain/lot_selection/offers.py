"""What lot selection works on and answers (docs/domain.md §9): the planned items, the rental
plans on offer, the lots chosen, the cuts proposed. Hours are float, money an exact Decimal
with its currency, memory in bytes."""

from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import Decimal
from typing import Literal

from catalog.domain.gpu_names import normalize_gpu

Tier = Literal["mandatory", "useful", "exploratory"]


Method = Literal["exact", "heuristic"]


MethodChoice = Literal["auto", "exact", "heuristic"]


TIERS: tuple[Tier, ...] = ("mandatory", "useful", "exploratory")


# Cut order for a reduced protocol: exploratory work goes before useful work; mandatory never.
CUT_ORDER: tuple[Tier, ...] = ("exploratory", "useful")


EXACT_MAX_GROUPS = 12


EXACT_NODE_LIMIT = 200_000


# Hours are floats; this absorbs summation noise so 24 + 24 + 24 still fits a 72 h lot.
EPS = 1e-9


MINUS = "\u2212"


CENT = Decimal("0.01")


@dataclass(frozen=True)
class PlanItem:
    """One planned run: its machine hours and what a lot must offer to host it."""

    key: str
    machine_hours: float
    gpu: str | None = None
    gpus_needed: int = 1
    memory_bytes_per_gpu: int | None = None
    tier: Tier = "mandatory"
    # None: the item is independent of every other item.
    group: str | None = None
    name: str = ""

    def __post_init__(self) -> None:
        if not self.key:
            raise ValueError("an item needs a non-empty key")
        if not math.isfinite(self.machine_hours) or self.machine_hours < 0:
            raise ValueError(
                f"item {self.key!r}: machine_hours must be finite and >= 0, "
                f"got {self.machine_hours!r}"
            )
        if self.gpus_needed < 1:
            raise ValueError(f"item {self.key!r}: gpus_needed must be >= 1")
        if self.memory_bytes_per_gpu is not None and self.memory_bytes_per_gpu < 0:
            raise ValueError(f"item {self.key!r}: memory_bytes_per_gpu must be >= 0")
        if self.tier not in TIERS:
            raise ValueError(f"item {self.key!r}: tier must be one of {TIERS}, got {self.tier!r}")

    @property
    def label(self) -> str:
        return self.name or self.key


@dataclass(frozen=True)
class RentalPlanOffer:
    """A rental plan: one lot of ``gpus_per_lot`` GPUs for ``duration_hours`` at ``price``."""

    provider: str
    name: str
    gpu: str
    gpus_per_lot: int
    gpu_memory_bytes: int
    duration_hours: float
    price: Decimal
    currency: str

    def __post_init__(self) -> None:
        if not isinstance(self.price, Decimal):
            raise TypeError(f"plan {self.name!r}: price must be a Decimal, not {type(self.price)}")
        if not self.price.is_finite() or self.price < 0:
            raise ValueError(f"plan {self.name!r}: price must be finite and >= 0")
        if self.gpus_per_lot < 1:
            raise ValueError(f"plan {self.name!r}: gpus_per_lot must be >= 1")
        if self.gpu_memory_bytes < 0:
            raise ValueError(f"plan {self.name!r}: gpu_memory_bytes must be >= 0")
        if not math.isfinite(self.duration_hours) or self.duration_hours <= 0:
            raise ValueError(f"plan {self.name!r}: duration_hours must be finite and > 0")
        if not self.currency:
            raise ValueError(f"plan {self.name!r}: currency is required")


@dataclass(frozen=True)
class Lot:
    """One bought lot and the items that run on it, sequentially, in this order."""

    plan: RentalPlanOffer
    item_keys: tuple[str, ...]
    hours: float


@dataclass(frozen=True)
class CutOption:
    """A reduced protocol: cutting these optional items lets ``plan`` do the work.

    ``instead_of`` is the plan it replaces, or None when the work had no lot at all.
    """

    item_keys: tuple[str, ...]
    hours_cut: float
    plan: RentalPlanOffer
    instead_of: RentalPlanOffer | None


@dataclass(frozen=True)
class Selection:
    lots: tuple[Lot, ...]
    total: Decimal
    currency: str
    feasible: bool
    unplaced: tuple[str, ...]
    explanation: tuple[str, ...]
    method: Method
    # Proven minimum cost for the placed work; equals ``total`` when the search was exact.
    lower_bound: Decimal
    cut_options: tuple[CutOption, ...] = ()


def item_fits_plan(item: PlanItem, plan: RentalPlanOffer) -> bool:
    """Whether the lot can host the run at all, ignoring hours."""
    if item.gpu is not None and normalize_gpu(item.gpu) != normalize_gpu(plan.gpu):
        return False
    if item.gpus_needed > plan.gpus_per_lot:
        return False
    need = item.memory_bytes_per_gpu
    return need is None or need <= plan.gpu_memory_bytes


def usable_hours(plan: RentalPlanOffer, window_hours: float) -> float:
    """Hours of work a lot can hold: its duration, cut at the campaign window."""
    return min(plan.duration_hours, window_hours)
