"""The calendar as an inline SVG Gantt chart (pure: no Django, no I/O).

Drawn from a computed schedule (campaigns/domain/calendar.py): one lane per machine resource, a lane
for people (stages without a machine), each stage a ``<rect>`` from its start to its end hour,
the critical path drawn darker with a heavy outline, the reserved lots as bars in a lane under
the GPU lanes. The x axis spans the plan, not the window: ``max(makespan, 1 h)`` plus a tenth,
so ten hours of work fill the width. The window end is a red rule labelled "window" when it
falls inside; when it lies beyond, the right edge says where it is. The uncommitted slack
between the plan's end and the window is hatched and labelled with its hours. Units: hours in,
pixels out.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

from campaigns.domain.formatting import format_hours_short as _h

WIDTH = 880
LANE = 22
LABEL = 120
TOP = 20
BOTTOM = 34
STAGE = "#79aec8"
CRITICAL = "#1d3f57"
HUMAN = "#c7b6e0"
LOT = "#e69f00"
WINDOW = "#ba2121"
SLACK = "#dddddd"
HUMAN_LANE = "people"


@dataclass(frozen=True)
class GanttStage:
    key: str
    resource: str | None  # None: a human stage
    start_hours: float
    end_hours: float
    critical: bool = False


@dataclass(frozen=True)
class GanttLot:
    label: str
    hours: float  # one lot's duration
    quantity: int = 1


@dataclass(frozen=True)
class _Frame:
    """Where things go: the lanes, the plot's bottom, and hours to x (the axis ends at `span`)."""

    lanes: tuple[str, ...]
    lot_lane: int | None
    plot_bottom: int
    span: float

    def x(self, hours: float) -> float:
        return LABEL + min(hours, self.span) / self.span * (WIDTH - LABEL - 10)


def gantt_svg(
    stages: Sequence[GanttStage], window_hours: float, lots: Sequence[GanttLot] = ()
) -> str:
    """The SVG markup of the calendar."""
    machine_lanes = sorted({s.resource for s in stages if s.resource})
    lanes = (*machine_lanes, HUMAN_LANE)
    n_lanes = len(lanes) + (1 if lots else 0)
    height = TOP + n_lanes * LANE + BOTTOM
    makespan = max((s.end_hours for s in stages), default=0.0)
    frame = _Frame(
        lanes=lanes,
        lot_lane=len(lanes) if lots else None,
        plot_bottom=TOP + n_lanes * LANE,
        span=max(makespan, 1.0) * 1.1,
    )
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" id="calendar-gantt" width="{WIDTH}" '
        f'height="{height}" viewBox="0 0 {WIDTH} {height}" role="img" '
        f'aria-label="calendar: {_h(makespan)} h of a {_h(window_hours)} h window" '
        'style="max-width:100%;height:auto">',
        '<defs><pattern id="slack-hatch" width="6" height="6" patternUnits="userSpaceOnUse" '
        f'patternTransform="rotate(45)"><rect width="3" height="6" fill="{SLACK}"/></pattern>'
        "</defs>",
        *_lane_labels(frame),
        *_slack(frame, makespan, window_hours),
        *(markup for s in stages for markup in _stage_bar(frame, s)),
        *_lot_bars(frame, lots),
        _window_rule(frame, window_hours),
        f'<text x="{LABEL}" y="{frame.plot_bottom + 14}" font-size="10">0 h</text>'
        f'<text x="{frame.x(makespan):.1f}" y="{frame.plot_bottom + 14}" font-size="10" '
        f'text-anchor="middle">{_h(makespan)} h</text>',
        "</svg>",
    ]
    return "".join(out)


def _lane_labels(frame: _Frame) -> list[str]:
    out = []
    for i, name in enumerate(frame.lanes):
        top = TOP + i * LANE
        out.append(
            f'<text x="{LABEL - 6}" y="{top + 15}" font-size="11" text-anchor="end">'
            f"{escape(name)}</text>"
            f'<line x1="{LABEL}" y1="{top + LANE}" x2="{WIDTH - 10}" y2="{top + LANE}" '
            'stroke="#eee"/>'
        )
    if frame.lot_lane is not None:
        out.append(
            f'<text x="{LABEL - 6}" y="{TOP + frame.lot_lane * LANE + 15}" font-size="11" '
            'text-anchor="end">reserved lots</text>'
        )
    return out


def _slack(frame: _Frame, makespan: float, window_hours: float) -> list[str]:
    """From the plan's end to the window (or to the edge when the window lies beyond)."""
    if window_hours <= makespan:
        return []
    sx, ex = frame.x(makespan), frame.x(window_hours)
    return [
        f'<rect class="slack" x="{sx:.1f}" y="{TOP}" width="{max(ex - sx, 0):.1f}" '
        f'height="{frame.plot_bottom - TOP}" fill="url(#slack-hatch)">'
        f"<title>{_h(window_hours - makespan)} h uncommitted</title></rect>"
        f'<text x="{sx + 4:.1f}" y="{TOP - 6}" font-size="11">slack '
        f"{_h(window_hours - makespan)} h</text>"
    ]


def _stage_bar(frame: _Frame, s: GanttStage) -> list[str]:
    lane = frame.lanes.index(s.resource) if s.resource else len(frame.lanes) - 1
    y = TOP + lane * LANE + 3
    fill = CRITICAL if s.critical else (STAGE if s.resource else HUMAN)
    stroke = ' stroke="#000" stroke-width="1.5"' if s.critical else ""
    start = frame.x(s.start_hours)
    width = max(frame.x(s.end_hours) - start, 2.0)
    label = f"{s.key}: {_h(s.start_hours)}–{_h(s.end_hours)} h"
    out = [
        f'<rect class="stage{" critical" if s.critical else ""}" x="{start:.1f}" '
        f'y="{y}" width="{width:.1f}" height="{LANE - 6}" fill="{fill}"{stroke}>'
        f"<title>{escape(label)}{' (critical path)' if s.critical else ''}</title></rect>"
    ]
    if width > 40:
        colour = "#fff" if s.critical or s.resource else "#000"
        out.append(
            f'<text x="{start + 3:.1f}" y="{y + 12}" font-size="10" '
            f'fill="{colour}">{escape(s.key[: int(width // 6)])}</text>'
        )
    return out


def _lot_bars(frame: _Frame, lots: Sequence[GanttLot]) -> list[str]:
    """The lots end to end from hour 0, each of `quantity` drawn once per unit."""
    if frame.lot_lane is None:
        return []
    out = []
    at = 0.0
    y = TOP + frame.lot_lane * LANE + 3
    for lot in lots:
        for _ in range(max(lot.quantity, 1)):
            width = max(frame.x(at + lot.hours) - frame.x(at), 2.0)
            out.append(
                f'<rect class="lot" x="{frame.x(at):.1f}" y="{y}" width="{width:.1f}" '
                f'height="{LANE - 6}" fill="{LOT}" stroke="#fff">'
                f"<title>{escape(lot.label)}: {_h(at)}–{_h(at + lot.hours)} h</title></rect>"
            )
            at += lot.hours
    return out


def _window_rule(frame: _Frame, window_hours: float) -> str:
    if window_hours <= frame.span:
        wx = frame.x(window_hours)
        bottom = frame.plot_bottom
        return (
            f'<line class="window" x1="{wx:.1f}" y1="{TOP - 4}" x2="{wx:.1f}" y2="{bottom}" '
            f'stroke="{WINDOW}" stroke-width="2"/><text x="{wx - 3:.1f}" y="{bottom + 28}" '
            f'font-size="11" fill="{WINDOW}" text-anchor="end">window {_h(window_hours)} h</text>'
        )
    return (
        f'<text class="window" x="{WIDTH - 10}" y="{frame.plot_bottom + 28}" font-size="11" '
        f'fill="{WINDOW}" text-anchor="end">window at {_h(window_hours)} h →</text>'
    )
