"""The calendar as an inline SVG Gantt chart (pure: no Django, no I/O).

Drawn from a computed schedule (campaigns/domain/calendar.py): one lane per machine resource, a lane
for people (stages without a machine), each stage a ``<rect>`` from its start to its end hour,
the critical path drawn darker with a heavy outline, the reserved lots as bars in a lane under
the GPU lanes.

To scale (docs/domain.md §7.6): the x axis spans ``max(window, the lots' end, the plan's
end)`` hours, so 31 h of slack in a 72 h window takes 31/72 of the plot and a 168 h lot is drawn
168 h long on the same scale as the stages. Every stage is labelled: by its name inside the bar
when it fits, otherwise by a number that a legend under the chart spells out. A stage of a cut
item is greyed and hatched (it is not planned work) and the legend says "cut". Observed hours,
once known, are a thinner dark bar under the planned one, from the planned start for the observed
length. Units: hours in, pixels out.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

from campaigns.domain.formatting import format_hours_short as _h

WIDTH = 880
LANE = 26
LABEL = 120
RIGHT = 14
TOP = 22
AXIS = 30  # the tick labels and the window label under the plot
LEGEND_LINE = 15
CHAR = 5.6  # pixels per character at font-size 10 (a conservative average)
STAGE = "#79aec8"
CRITICAL = "#1d3f57"
HUMAN = "#c7b6e0"
CUT = "#bbbbbb"
OBSERVED = "#2a2a2a"
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
    cut: bool = False  # the stage's item was cut: drawn greyed, not as planned work
    observed_hours: float | None = None  # hours the stage actually took, once known


@dataclass(frozen=True)
class GanttLot:
    label: str
    hours: float  # one lot's duration
    quantity: int = 1


def _finite(value: float, default: float = 0.0) -> float:
    return value if math.isfinite(value) else default


def lots_end_hours(lots: Sequence[GanttLot]) -> float:
    """The lots laid end to end from hour 0 (each unit of a quantity after the previous)."""
    return sum(max(_finite(lot.hours), 0.0) * max(lot.quantity, 1) for lot in lots)


def axis_span(stages: Sequence[GanttStage], window_hours: float, lots: Sequence[GanttLot]) -> float:
    """Hours the x axis covers: the window, the lots and the plan, whichever ends last."""
    ends = [_finite(s.end_hours) for s in stages]
    ends += [_finite(s.start_hours) + _finite(s.observed_hours or 0.0) for s in stages]
    return max([_finite(window_hours), lots_end_hours(lots), 1.0, *ends])


@dataclass(frozen=True)
class _Frame:
    """Where things go: the lanes, the plot's bottom, and hours to x (the axis ends at `span`)."""

    lanes: tuple[str, ...]
    lot_lane: int | None
    plot_bottom: int
    span: float

    def x(self, hours: float) -> float:
        hours = min(max(_finite(hours), 0.0), self.span)
        return LABEL + hours / self.span * (WIDTH - LABEL - RIGHT)


def _numbered(stages: Sequence[GanttStage], frame: _Frame) -> dict[str, int]:
    """The stages whose name does not fit inside their bar, numbered for the legend."""
    out: dict[str, int] = {}
    for s in stages:
        width = frame.x(s.end_hours) - frame.x(s.start_hours)
        if width < len(s.key) * CHAR + 6:
            out[s.key] = len(out) + 1
    return out


def gantt_svg(
    stages: Sequence[GanttStage], window_hours: float, lots: Sequence[GanttLot] = ()
) -> str:
    """The SVG markup of the calendar."""
    machine_lanes = sorted({s.resource for s in stages if s.resource})
    lanes = (*machine_lanes, HUMAN_LANE)
    n_lanes = len(lanes) + (1 if lots else 0)
    plot_bottom = TOP + n_lanes * LANE
    frame = _Frame(
        lanes=lanes,
        lot_lane=len(lanes) if lots else None,
        plot_bottom=plot_bottom,
        span=axis_span(stages, window_hours, lots),
    )
    makespan = max((_finite(s.end_hours) for s in stages if not s.cut), default=0.0)
    numbers = _numbered(stages, frame)
    legend = _legend(stages, numbers, plot_bottom + AXIS + 8)
    height = plot_bottom + AXIS + 8 + len(legend[1]) * LEGEND_LINE + 6
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" id="calendar-gantt" width="{WIDTH}" '
        f'height="{height}" viewBox="0 0 {WIDTH} {height}" role="img" '
        f'aria-label="calendar: {_h(makespan)} h of a {_h(window_hours)} h window" '
        'style="max-width:100%;height:auto" font-family="sans-serif">',
        '<defs><pattern id="slack-hatch" width="6" height="6" patternUnits="userSpaceOnUse" '
        f'patternTransform="rotate(45)"><rect width="3" height="6" fill="{SLACK}"/></pattern>'
        '<pattern id="cut-hatch" width="5" height="5" patternUnits="userSpaceOnUse" '
        'patternTransform="rotate(-45)"><rect width="5" height="5" fill="#eeeeee"/>'
        f'<rect width="2" height="5" fill="{CUT}"/></pattern></defs>',
        *_lane_labels(frame),
        *_ticks(frame),
        *_slack(frame, makespan, window_hours),
        *(markup for s in stages for markup in _stage_bar(frame, s, numbers.get(s.key))),
        *_lot_bars(frame, lots),
        _window_rule(frame, window_hours),
        *legend[0],
        "</svg>",
    ]
    return "".join(out)


def _lane_labels(frame: _Frame) -> list[str]:
    out = []
    for i, name in enumerate(frame.lanes):
        top = TOP + i * LANE
        out.append(
            f'<text x="{LABEL - 6}" y="{top + 16}" font-size="11" text-anchor="end">'
            f"{escape(name[:18])}</text>"
            f'<line x1="{LABEL}" y1="{top + LANE}" x2="{WIDTH - RIGHT}" y2="{top + LANE}" '
            'stroke="#eee"/>'
        )
    if frame.lot_lane is not None:
        out.append(
            f'<text x="{LABEL - 6}" y="{TOP + frame.lot_lane * LANE + 16}" font-size="11" '
            'text-anchor="end">reserved lots</text>'
        )
    return out


def _tick_step(span: float) -> float:
    """A round step (1, 2, 4, 6, 12, 24, 48 … h) giving at most about ten ticks."""
    for step in (1, 2, 4, 6, 12, 24, 48, 72, 168, 336, 720):
        if span / step <= 10:
            return float(step)
    return float(10 ** math.ceil(math.log10(span / 10)))


def _ticks(frame: _Frame) -> list[str]:
    step = _tick_step(frame.span)
    out = []
    at = 0.0
    while at <= frame.span + 1e-9:
        x = frame.x(at)
        out.append(
            f'<line class="tick" x1="{x:.1f}" y1="{TOP}" x2="{x:.1f}" y2="{frame.plot_bottom}" '
            f'stroke="#f0f0f0"/><text x="{x:.1f}" y="{frame.plot_bottom + 12}" font-size="10" '
            f'fill="#666" text-anchor="middle">{_h(at)} h</text>'
        )
        at += step
    return out


def _slack(frame: _Frame, makespan: float, window_hours: float) -> list[str]:
    """From the plan's end to the window's end, to scale."""
    if not math.isfinite(window_hours) or window_hours <= makespan:
        return []
    sx, ex = frame.x(makespan), frame.x(window_hours)
    return [
        f'<rect class="slack" x="{sx:.1f}" y="{TOP}" width="{max(ex - sx, 0):.1f}" '
        f'height="{len(frame.lanes) * LANE}" fill="url(#slack-hatch)">'
        f"<title>{_h(window_hours - makespan)} h uncommitted</title></rect>"
        f'<text x="{sx + 4:.1f}" y="{TOP - 7}" font-size="11">slack '
        f"{_h(window_hours - makespan)} h</text>"
    ]


def _stage_fill(s: GanttStage) -> tuple[str, str, str]:
    """The class suffix, the fill and the outline of a stage's bar."""
    if s.cut:
        return " cut", "url(#cut-hatch)", f' stroke="{CUT}"'
    if s.critical:
        return " critical", CRITICAL, ' stroke="#000" stroke-width="1.5"'
    return "", STAGE if s.resource else HUMAN, ""


def _stage_bar(frame: _Frame, s: GanttStage, number: int | None) -> list[str]:
    lane = frame.lanes.index(s.resource) if s.resource else len(frame.lanes) - 1
    y = TOP + lane * LANE + 3
    cls, fill, stroke = _stage_fill(s)
    start = frame.x(s.start_hours)
    width = max(frame.x(s.end_hours) - start, 2.0)
    title = f"{s.key}: {_h(s.start_hours)}–{_h(s.end_hours)} h"
    title += " (cut: not run)" if s.cut else (" (critical path)" if s.critical else "")
    out = [
        f'<rect class="stage{cls}" x="{start:.1f}" y="{y}" width="{width:.1f}" '
        f'height="{LANE - 12}" fill="{fill}"{stroke}><title>{escape(title)}</title></rect>'
    ]
    dark = s.resource and not s.cut
    if number is None:
        out.append(
            f'<text class="label-stage" x="{start + 3:.1f}" y="{y + 11}" font-size="10" '
            f'fill="{"#fff" if dark else "#000"}">{escape(s.key)}</text>'
        )
    elif width >= 6:  # a number fits where a name does not (8 px digits on narrow bars)
        size = 10 if width >= 14 else 8
        out.append(
            f'<text class="label-stage" x="{start + width / 2:.1f}" y="{y + 11}" '
            f'font-size="{size}" text-anchor="middle" fill="{"#fff" if dark else "#000"}">'
            f"{number}</text>"
        )
    else:  # too narrow even for its number: the number just after the bar
        out.append(
            f'<text class="label-stage" x="{start + width + 2:.1f}" y="{y + 11}" '
            f'font-size="10">{number}</text>'
        )
    if s.observed_hours is not None and math.isfinite(s.observed_hours):
        end = frame.x(s.start_hours + max(s.observed_hours, 0.0))
        out.append(
            f'<rect class="observed" x="{start:.1f}" y="{y + LANE - 11}" '
            f'width="{max(end - start, 1.5):.1f}" height="4" fill="{OBSERVED}">'
            f"<title>{escape(s.key)}: observed {_h(s.observed_hours)} h of "
            f"{_h(s.end_hours - s.start_hours)} h planned</title></rect>"
        )
    return out


def _lot_bars(frame: _Frame, lots: Sequence[GanttLot]) -> list[str]:
    """The lots end to end from hour 0, each of `quantity` drawn once per unit, to scale."""
    if frame.lot_lane is None:
        return []
    out = []
    at = 0.0
    y = TOP + frame.lot_lane * LANE + 3
    for lot in lots:
        hours = max(_finite(lot.hours), 0.0)
        for _ in range(max(lot.quantity, 1)):
            x = frame.x(at)
            width = max(frame.x(at + hours) - x, 2.0)
            text = f"{lot.label} · {_h(hours)} h"
            out.append(
                f'<rect class="lot" x="{x:.1f}" y="{y}" width="{width:.1f}" '
                f'height="{LANE - 12}" fill="{LOT}" stroke="#fff">'
                f"<title>{escape(lot.label)}: {_h(at)}–{_h(at + hours)} h</title></rect>"
            )
            if width > len(text) * CHAR + 6:
                out.append(
                    f'<text x="{x + 3:.1f}" y="{y + 11}" font-size="10">{escape(text)}</text>'
                )
            at += hours
    return out


def _window_rule(frame: _Frame, window_hours: float) -> str:
    if not math.isfinite(window_hours) or window_hours <= 0:
        return ""
    wx = frame.x(window_hours)
    bottom = frame.plot_bottom
    return (
        f'<line class="window" x1="{wx:.1f}" y1="{TOP - 4}" x2="{wx:.1f}" y2="{bottom}" '
        f'stroke="{WINDOW}" stroke-width="2"/><text x="{wx - 3:.1f}" y="{bottom + 26}" '
        f'font-size="11" fill="{WINDOW}" text-anchor="end">window {_h(window_hours)} h</text>'
    )


def _swatch(x: float, y: float, fill: str, text: str, extra: str = "") -> tuple[str, float]:
    markup = (
        f'<rect x="{x:.1f}" y="{y - 9}" width="14" height="10" fill="{fill}"{extra}/>'
        f'<text x="{x + 18:.1f}" y="{y}" font-size="10">{escape(text)}</text>'
    )
    return markup, x + 18 + len(text) * CHAR + 10


def _legend(
    stages: Sequence[GanttStage], numbers: dict[str, int], top: int
) -> tuple[list[str], list[int]]:
    """The key to the colours (only those drawn), then the numbered stages, wrapped in lines.
    Returns the markup and the y of each line (the chart's height grows with them)."""
    kinds = [(STAGE, "stage", ""), (CRITICAL, "critical path", "")]
    if any(s.resource is None for s in stages):
        kinds.append((HUMAN, "people", ""))
    if any(s.cut for s in stages):
        kinds.append(("url(#cut-hatch)", "cut (not run)", f' stroke="{CUT}"'))
    if any(s.observed_hours is not None for s in stages):
        kinds.append((OBSERVED, "observed hours", ""))
    out: list[str] = ['<g class="gantt-legend">']
    y, x = top + LEGEND_LINE - 4, float(LABEL)
    lines = [y]
    for fill, text, extra in kinds:
        markup, x = _swatch(x, y, fill, text, extra)
        out.append(markup)
    by_key = {s.key: s for s in stages}
    for key, n in numbers.items():
        s = by_key[key]
        text = f"{n} {key} ({_h(s.start_hours)}–{_h(s.end_hours)} h{', cut' if s.cut else ''})"
        needed = len(text) * CHAR + 10
        if x + needed > WIDTH - RIGHT:
            y, x = y + LEGEND_LINE, float(LABEL)
            lines.append(y)
        out.append(f'<text class="legend-number" x="{x:.1f}" y="{y}" font-size="10">')
        out.append(f"{escape(text)}</text>")
        x += needed
    out.append("</g>")
    return out, lines
