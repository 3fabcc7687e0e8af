"""The reserved lots on the timeline (docs/domain.md §7.7, §9): where each lot starts and ends,
in hours from the start of the calendar.

A reservation of `quantity` lots of one plan is `quantity` lots of its duration. Lots are laid
end to end from hour 0 in the order given (each unit of a quantity after the previous), as the
plan figures count the lots' hours (duration × quantity, §8.5); a lot with its own start (hours
after the commit) starts there, and the next one without a start follows it. Pure: no Django,
no I/O; hours are floats.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True, kw_only=True)
class LotPlan:
    label: str
    gpu: str = ""
    # One lot's duration, in hours.
    hours: float
    quantity: int = 1
    # Hours after the commit at which the lot starts; None: after the previous lot.
    start_hours: float | None = None


@dataclass(frozen=True)
class LotSpan:
    label: str
    gpu: str
    start: float
    end: float

    @property
    def hours(self) -> float:
        return self.end - self.start


def _finite(value: float) -> float:
    return value if math.isfinite(value) and value > 0 else 0.0


def lay_out_lots(lots: Sequence[LotPlan]) -> tuple[LotSpan, ...]:
    """Each lot unit's span, in order (the rule above)."""
    spans: list[LotSpan] = []
    at = 0.0
    for lot in lots:
        if lot.start_hours is not None and math.isfinite(lot.start_hours):
            at = max(lot.start_hours, 0.0)
        hours = _finite(lot.hours)
        for _ in range(max(lot.quantity, 1)):
            spans.append(LotSpan(lot.label, lot.gpu, at, at + hours))
            at += hours
    return tuple(spans)
