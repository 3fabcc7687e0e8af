"""A plan's warnings, in one list (docs/domain.md §7.8): the campaign page, the commit
confirmation and the API (`warnings` of the timeline) all show exactly this list. None of them
refuses anything: refusals are the commit's problems (§3.1).

In this order, each with a stable `code`:

- `no_mandatory`, `no_baseline` (§2.5), `grid` (§2.4);
- `no_stage` per live item with planned hours and no stage: its hours are in no calendar;
- `no_work` when no live item states its work (a pilot cannot rescale anything, §10.2a);
- `calendar` when the stages cannot be scheduled (a dependency cycle);
- `gpu_over_window` per GPU whose machine stages add up past the window (§7.4);
- `over_window` when the calendar (as forecast) ends past the window: the headline's sentence,
  with what the lot advice buys or cuts;
- `lots_short` when the reserved lots end before the calendar's machine time does, or none is
  reserved while the calendar needs machine time;
- `memory` per live item the calculator says does not fit its GPU's memory;
- `calculator` per live item (not done, not cut) whose calculator hours differ from its planned
  hours by more than `DISAGREE_SHARE` of them.

Pure: no Django, no I/O. Hours are floats, written with the project's one hours formatter.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from campaigns.domain import calendar
from campaigns.domain.formatting import format_hours
from campaigns.domain.grid_warning import grid_warning
from campaigns.domain.timeline import Timeline
from estimates.domain.forecast_inputs import ItemForecast, ItemInput, PlanWarning

# The calculator and the plan disagree when they are more than a quarter apart.
DISAGREE_SHARE: Final = 0.25
_LIVE_DONE: Final = frozenset({"cut", "done"})


def _design(items: Sequence[ItemInput]) -> list[PlanWarning]:
    out: list[PlanWarning] = []
    if not any(i.tier == "mandatory" for i in items):
        out.append(
            PlanWarning("no_mandatory", "No mandatory item yet: the plan cannot be committed.")
        )
    if not any(i.role == "baseline" for i in items):
        out.append(
            PlanWarning("no_baseline", "No baseline: a variant is only judged against a baseline.")
        )
    warning = grid_warning([dict(i.config) for i in items if i.role == "variant" and i.config])
    if warning:
        out.append(PlanWarning("grid", warning))
    return out


def _work(items: Sequence[ItemInput], line: Timeline) -> list[PlanWarning]:
    by_name = {i.name: i.id for i in items}
    out = [
        PlanWarning(
            "no_stage",
            f"{name} has no stage: the calendar does not reserve its hours.",
            item=by_name.get(name),
        )
        for name in line.items_without_stage
    ]
    live = [i for i in items if i.status != "cut"]
    if live and not any(i.config.get("tokens") or i.config.get("samples") for i in live):
        out.append(
            PlanWarning(
                "no_work",
                "No item states its work (tokens or samples): a pilot's throughput cannot "
                "rescale any estimate, and the forecast stays at the planned hours. Fill an "
                "item's work in its row.",
            )
        )
    return out


def _calendar(line: Timeline, headline: str) -> list[PlanWarning]:
    out: list[PlanWarning] = []
    if line.problem:
        out.append(PlanWarning("calendar", f"The calendar cannot be scheduled: {line.problem}."))
    stages = [
        calendar.Stage(
            key=s.key, machine=s.machine, resource=s.resource or None, planned_hours=s.hours
        )
        for s in line.stages
        if s.hours >= 0
    ]
    out.extend(
        PlanWarning("gpu_over_window", load.message)
        for load in calendar.resource_loads(stages, line.window_hours)
        if load.exceeds_window
    )
    if not line.fits:
        out.append(PlanWarning("over_window", headline))
    out.extend(_lots(line))
    return out


def _lots(line: Timeline) -> list[PlanWarning]:
    if line.machine_hours <= 0:
        return []
    if not line.lots:
        return [
            PlanWarning(
                "lots_short",
                f"No lot is reserved: the calendar needs {format_hours(line.machine_end)} h of "
                "machine time.",
            )
        ]
    short = line.hours_to_buy or 0.0
    if short < 0.005:
        return []
    return [
        PlanWarning(
            "lots_short",
            f"The reserved lots end at {format_hours(line.lots_end)} h; the calendar needs "
            f"machine time until {format_hours(line.machine_end)} h: {format_hours(short)} h "
            "still to buy.",
        )
    ]


def _calculator(forecasts: Sequence[ItemForecast]) -> list[PlanWarning]:
    out: list[PlanWarning] = []
    for f in forecasts:
        calc: Mapping[str, Any] | None = f.calculator
        if calc is None or f.status in _LIVE_DONE:
            continue
        if not calc.get("fits_in_memory", True):
            out.append(PlanWarning("memory", f"{f.name}: {calc['first_recommendation']}", f.id))
            continue
        hours, planned = float(calc.get("wall_hours") or 0.0), f.planned_hours
        if planned > 0 and abs(hours - planned) > DISAGREE_SHARE * planned:
            out.append(
                PlanWarning(
                    "calculator",
                    f"{f.name}: the calculator expects {format_hours(hours)} h at the assumed "
                    f"utilization against {format_hours(planned)} h planned.",
                    f.id,
                )
            )
    return out


def plan_warnings(
    items: Sequence[ItemInput],
    forecasts: Sequence[ItemForecast],
    line: Timeline,
    headline: str,
) -> tuple[PlanWarning, ...]:
    """The plan's warnings, in the order of the module docstring."""
    return (
        *_design(items),
        *_work(items, line),
        *_calendar(line, headline),
        *_calculator(forecasts),
    )
