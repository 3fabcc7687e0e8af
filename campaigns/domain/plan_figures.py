"""The plan's four hour figures, each named plainly and computed here only (docs/domain.md §8.5):

- **work hours**: the planned machine hours of the items not cut (each item's `planned_hours`,
  wall hours on its machine; preparation is human time and not counted);
- **GPU-hours**: each of those items' work hours × the GPUs it trains on (1 when it names none);
- **calendar length**: how long the calendar takes from its first stage to its last (the
  schedule's makespan, human stages and waits included; without stages, the items' work and
  preparation one after another);
- **lots' hours**: the rental time reserved, each lot's duration × its quantity;

and beside them, once anything was observed, the **observed hours**: the stages' figures as
campaigns/domain/observed_hours.py reconciles them with the runs, plus the runs tied to no
stage (§8.6), the forecast's and the report's observed figure too.

The campaign page, the API (`plan_figures`) and the closing report all show these values, so
"41 h" is never both the calendar and the lots. Pure: no Django, no I/O. Hours as Decimal,
rounded half-up to 0.01 h.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from campaigns.domain.formatting import format_hours

CENT = Decimal("0.01")


def _h(value: Decimal | float) -> Decimal:
    return Decimal(str(value)).quantize(CENT, rounding=ROUND_HALF_UP)


@dataclass(frozen=True)
class ItemWork:
    planned_hours: Decimal
    prep_hours: Decimal
    gpus: int | None
    cut: bool


@dataclass(frozen=True)
class PlanFigures:
    work_hours: Decimal
    gpu_hours: Decimal
    calendar_hours: Decimal
    lot_hours: Decimal
    window_hours: Decimal
    observed_hours: Decimal | None = None

    @property
    def spare_hours(self) -> Decimal:
        """The window left after the calendar (negative: the calendar is over the window)."""
        return self.window_hours - self.calendar_hours

    def as_json(self) -> dict[str, Any]:
        return {
            "work_hours": str(self.work_hours),
            "gpu_hours": str(self.gpu_hours),
            "calendar_hours": str(self.calendar_hours),
            "lot_hours": str(self.lot_hours),
            "window_hours": str(self.window_hours),
            "observed_hours": None if self.observed_hours is None else str(self.observed_hours),
        }

    def lines(self) -> list[tuple[str, str]]:
        """(label, value) as the page and the report print them."""
        lines = [
            (
                "Work hours (planned machine hours of the items not cut)",
                format_hours(self.work_hours),
            ),
            ("GPU-hours (work hours × GPUs)", format_hours(self.gpu_hours)),
            ("Calendar length (first stage to last)", format_hours(self.calendar_hours)),
            ("Lots' hours (rental time reserved)", format_hours(self.lot_hours)),
            ("Window", format_hours(self.window_hours)),
        ]
        if self.observed_hours is not None:
            lines.append(
                (
                    "Observed hours (from the runs, typed where none)",
                    format_hours(self.observed_hours),
                )
            )
        return lines


def plan_figures(
    items: Iterable[ItemWork],
    *,
    calendar_hours: float | Decimal | None,
    lots: Iterable[tuple[Decimal | float, int]],
    window_hours: Decimal,
    observed_hours: Decimal | None = None,
) -> PlanFigures:
    """The four figures; `calendar_hours` None when the plan has no schedulable calendar, then
    the items' work and preparation one after another; `lots` as (duration h, quantity);
    `observed_hours` None while nothing was observed."""
    live = [i for i in items if not i.cut]
    work = sum((Decimal(i.planned_hours) for i in live), Decimal(0))
    gpu = sum((Decimal(i.planned_hours) * (i.gpus or 1) for i in live), Decimal(0))
    if calendar_hours is None:
        calendar_hours = sum(
            (Decimal(i.planned_hours) + Decimal(i.prep_hours) for i in live), Decimal(0)
        )
    lot = sum((Decimal(str(hours)) * quantity for hours, quantity in lots), Decimal(0))
    observed = None if observed_hours is None else _h(observed_hours)
    return PlanFigures(_h(work), _h(gpu), _h(calendar_hours), _h(lot), _h(window_hours), observed)
