"""Geometry of the closing report's inline SVG charts (pure: no Django, no I/O).

The template only draws what these functions place: rectangles, text and rules in pixels. Two
charts: the stages as a timeline, planned (from the frozen baseline's schedule) above observed,
and the cost breakdown as horizontal bars. Units: hours in, money as Decimal in, pixels out.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from decimal import Decimal
from typing import Any

from campaigns.charts.gantt import stages_from_timeline
from campaigns.domain.formatting import format_hours_short as _hours
from campaigns.domain.timeline import Timeline

PLANNED = "#8fb3d9"
PLANNED_HUMAN = "#c7b6e0"
OBSERVED = "#2e7d4f"
OBSERVED_OVER = "#c0392b"
WINDOW = "#ba2121"
GRID = "#dddddd"
INK = "#333333"

RENTAL = "#417690"
INCLUDED = "#79aec8"
INCURRED = "#1d3f57"
EXTERNAL = "#e69f00"
PER_ACCEPTED = "#6a3d9a"

_LABEL_WIDTH = 230
_PLOT_WIDTH = 620
_RIGHT_MARGIN = 70
_MIN_BAR = 2.0  # a zero-hour stage is still a visible tick
_NICE_STEPS = (0.5, 1, 2, 3, 4, 6, 8, 12, 24, 48, 72, 168, 336, 720, 1440)


@dataclass(frozen=True)
class Rect:
    x: float
    y: float
    width: float
    height: float
    fill: str
    title: str


@dataclass(frozen=True)
class Label:
    x: float
    y: float
    text: str
    anchor: str = "start"
    fill: str = INK
    size: int = 12


@dataclass(frozen=True)
class Rule:
    x1: float
    y1: float
    x2: float
    y2: float
    stroke: str = GRID
    dash: str = ""


@dataclass(frozen=True)
class Chart:
    id: str
    title: str
    width: int
    height: int
    rects: tuple[Rect, ...] = ()
    labels: tuple[Label, ...] = ()
    rules: tuple[Rule, ...] = ()
    legend: tuple[tuple[str, str], ...] = field(default=())


@dataclass(frozen=True)
class TimelineRow:
    label: str
    planned_start: float
    planned_end: float
    observed_start: float | None = None
    observed_end: float | None = None
    # More than 10% away from the plan: drawn in the alarm colour.
    deviates: bool = False
    machine: bool = True


@dataclass(frozen=True)
class CostRow:
    label: str
    amount: Decimal
    fill: str


def _short(text: str, limit: int = 34) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _r(value: float) -> float:
    return round(value, 1)


def _tick_step(span: float) -> float:
    for step in _NICE_STEPS:
        if span / step <= 12:
            return step
    return _NICE_STEPS[-1]


_TIMELINE_TOP = 34
_TIMELINE_ROW_HEIGHT = 30
_TIMELINE_LEGEND = (
    (PLANNED, "planned (machine)"),
    (PLANNED_HUMAN, "planned (human)"),
    (OBSERVED, "observed"),
    (OBSERVED_OVER, "observed, >10% off plan"),
)


@dataclass(frozen=True)
class _HourAxis:
    """Hours to pixels: the plot starts right of the stage labels; `scale` is pixels per hour."""

    scale: float

    def x(self, hours: float) -> float:
        return _r(_LABEL_WIDTH + hours * self.scale)

    def width(self, start: float, end: float) -> float:
        # A zero-hour stage is still drawn, as a tick of _MIN_BAR pixels.
        return _r(max(_MIN_BAR, (end - start) * self.scale))


def _hour_ticks(axis: _HourAxis, span: float, bottom: float) -> tuple[list[Rule], list[Label]]:
    """A grid rule and an hour label at every nice step from 0 up to the span (inclusive; the
    epsilon keeps the last tick when the steps add up to the span in floating point)."""
    rules: list[Rule] = []
    labels: list[Label] = []
    top = _TIMELINE_TOP
    step = _tick_step(span)
    tick = 0.0
    while tick <= span + 1e-9:
        rules.append(Rule(axis.x(tick), top - 6, axis.x(tick), bottom))
        labels.append(Label(axis.x(tick), top - 10, _hours(tick), anchor="middle", size=10))
        tick += step
    return rules, labels


def _stage_bars(row: TimelineRow, y: float, axis: _HourAxis) -> list[Rect]:
    """The planned bar (upper half of the row) and, once the stage has both ends observed, the
    observed bar under it; a deviating stage is drawn in the alarm colour."""
    planned = Rect(
        axis.x(row.planned_start),
        y + 4,
        axis.width(row.planned_start, row.planned_end),
        10,
        PLANNED if row.machine else PLANNED_HUMAN,
        f"{row.label}: planned {_hours(row.planned_start)}–{_hours(row.planned_end)} h",
    )
    if row.observed_start is None or row.observed_end is None:
        return [planned]
    observed = Rect(
        axis.x(row.observed_start),
        y + 15,
        axis.width(row.observed_start, row.observed_end),
        10,
        OBSERVED_OVER if row.deviates else OBSERVED,
        f"{row.label}: observed {_hours(row.observed_start)}–{_hours(row.observed_end)} h",
    )
    return [planned, observed]


def _window_marker(axis: _HourAxis, window_hours: float, bottom: float) -> tuple[Rule, Label]:
    """The committed window's end: a dashed rule across the stages, its hours under them."""
    x = axis.x(window_hours)
    rule = Rule(x, _TIMELINE_TOP - 6, x, bottom, WINDOW, "6 4")
    label = Label(x, bottom + 14, f"window {_hours(window_hours)} h", "middle", WINDOW, 11)
    return rule, label


def timeline_chart(rows: Sequence[TimelineRow], window_hours: float) -> Chart:
    """Planned bar (top) and observed bar (bottom) per stage, on one hour axis with the window.
    The axis spans the window, every planned and observed end, and at least one hour."""
    title = "Stages: planned (frozen baseline) versus observed"
    if not rows:
        return Chart("timeline", title, 900, 60, labels=(Label(10, 30, "No stages were planned."),))
    ends = [r.planned_end for r in rows] + [r.observed_end or 0.0 for r in rows]
    span = max([window_hours, *ends, 1.0])
    axis = _HourAxis(_PLOT_WIDTH / span)
    bottom = _TIMELINE_TOP + _TIMELINE_ROW_HEIGHT * len(rows)
    rules, labels = _hour_ticks(axis, span, bottom)
    rects: list[Rect] = []
    for i, row in enumerate(rows):
        y = _TIMELINE_TOP + i * _TIMELINE_ROW_HEIGHT
        labels.append(Label(8, y + 18, _short(row.label)))
        rects.extend(_stage_bars(row, y, axis))
    window_rule, window_label = _window_marker(axis, window_hours, bottom)
    return Chart(
        "timeline",
        title,
        _LABEL_WIDTH + _PLOT_WIDTH + _RIGHT_MARGIN,
        bottom + 40,
        tuple(rects),
        (*labels, window_label),
        (*rules, window_rule),
        legend=_TIMELINE_LEGEND,
    )


def cost_chart(rows: Sequence[CostRow], currency: str) -> Chart:
    """One horizontal bar per cost line, scaled to the largest amount, the amount at its end."""
    title = f"Cost breakdown ({currency})"
    top, row_height = 12, 30
    height = top + row_height * max(1, len(rows)) + 10
    largest = max([r.amount for r in rows if r.amount > 0], default=Decimal(0))
    rects: list[Rect] = []
    labels: list[Label] = []
    rules = [Rule(_LABEL_WIDTH, top - 4, _LABEL_WIDTH, top + row_height * max(1, len(rows)))]
    for i, row in enumerate(rows):
        y = top + i * row_height
        width = 0.0
        if largest > 0 and row.amount > 0:
            width = max(_MIN_BAR, float(row.amount / largest) * _PLOT_WIDTH)
        labels.append(Label(8, y + 15, _short(row.label)))
        amount = f"{row.amount:.2f} {currency}"
        rects.append(Rect(_LABEL_WIDTH, y + 3, _r(width), 18, row.fill, f"{row.label}: {amount}"))
        labels.append(Label(_r(_LABEL_WIDTH + width + 6), y + 16, amount, size=11))
    return Chart(
        "costs",
        title,
        _LABEL_WIDTH + _PLOT_WIDTH + _RIGHT_MARGIN + 40,
        height,
        tuple(rects),
        tuple(labels),
        tuple(rules),
    )


def gantt_section(timeline: Timeline) -> dict[str, Any]:
    """The Gantt's input, from the timeline (campaigns/charts/gantt.py `stages_from_timeline`),
    stored with the report so that every rendering of it draws the same chart."""
    return {
        "window_hours": timeline.window_hours,
        "stages": [asdict(s) for s in stages_from_timeline(timeline)],
        "lots": [asdict(lot) for lot in timeline.lots],
    }
