"""The timeline as an inline SVG Gantt chart (pure: no Django, no I/O; docs/domain.md §7.6, §7.7).

Drawn from the campaign's timeline (campaigns/domain/timeline.py): one lane per machine
resource, a lane for people (stages without a machine), and for each stage two bars: a thin
outlined bar where the **committed plan** put it, and under it the stage **as observed and
forecast** (the current calendar: solid where it happened, lighter where it is still a forecast,
striped while it runs), so a slip shows as every later bar moving right of its plan. The
critical path has a heavy outline; a stage of a cut item is hatched grey (only what ran before
the cut is drawn); whatever runs past the window is overlaid in the warning colour. The reserved
lots are bars in a lane under the GPU lanes, each lot's end marked across the plot.

To scale (§7.6): the x axis spans ``max(window, the lots' end, the committed and the current
calendar's end)`` hours, so 24 h of slack in a 72 h window take a third of the plot and a 168 h
lot is drawn 168 h long on the same scale as the stages. Every stage is labelled: by its name
inside the bar when it fits, otherwise by a number that a legend under the chart spells out.
Units: hours in, pixels out.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

from campaigns.domain.formatting import format_hours_short as _h
from campaigns.domain.timeline import Timeline
from campaigns.domain.timeline_lots import LotSpan

WIDTH = 880
LANE = 30
LABEL = 120
RIGHT = 14
TOP = 22
AXIS = 30  # the tick labels and the window label under the plot
LEGEND_LINE = 15
CHAR = 5.6  # pixels per character at font-size 10 (a conservative average)
STAGE = "#79aec8"
DONE = "#2f6f8f"
CRITICAL = "#000000"
HUMAN = "#c7b6e0"
CUT = "#bbbbbb"
PLAN = "#555555"
LOT = "#e69f00"
WINDOW = "#ba2121"
SLACK = "#dddddd"
HUMAN_LANE = "people"


@dataclass(frozen=True)
class GanttStage:
    key: str
    resource: str | None  # None: a human stage
    # The current calendar: observed where it happened, forecast elsewhere.
    start_hours: float
    end_hours: float
    critical: bool = False
    # planned, running, done or cut (campaigns/domain/timeline.py).
    state: str = "planned"
    # Where the committed plan put it (None: not in the committed calendar).
    planned_start: float | None = None
    planned_end: float | None = None

    @property
    def cut(self) -> bool:
        return self.state == "cut"


def stages_from_timeline(timeline: Timeline) -> list[GanttStage]:
    """The chart's stages: each stage of the timeline where it is now and where it was planned."""
    return [
        GanttStage(
            key=s.key,
            resource=(s.resource or "unassigned") if s.machine else None,
            start_hours=s.start,
            end_hours=s.end,
            critical=s.critical,
            state=s.state,
            planned_start=s.planned_start,
            planned_end=s.planned_end,
        )
        for s in timeline.stages
    ]


def gantt_of(timeline: Timeline) -> str:
    """The timeline's chart: its stages, its window and its lots."""
    return gantt_svg(stages_from_timeline(timeline), timeline.window_hours, timeline.lots)


def _finite(value: float | None, default: float = 0.0) -> float:
    return value if value is not None and math.isfinite(value) else default


def axis_span(
    stages: Sequence[GanttStage], window_hours: float, lots: Sequence[LotSpan] = ()
) -> float:
    """Hours the x axis covers: the window, the lots and both calendars, whichever ends last."""
    ends = [_finite(s.end_hours) for s in stages]
    ends += [_finite(s.planned_end) for s in stages]
    ends += [_finite(lot.end) for lot in lots]
    return max([_finite(window_hours), 1.0, *ends])


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


def _aria(stages: Sequence[GanttStage], window_hours: float) -> str:
    end = max((_finite(s.end_hours) for s in stages), default=0.0)
    planned = max((_finite(s.planned_end) for s in stages), default=0.0)
    text = f"calendar: {_h(end)} h of a {_h(window_hours)} h window"
    return text + (f" (planned {_h(planned)} h)" if abs(planned - end) >= 0.05 else "")


def gantt_svg(
    stages: Sequence[GanttStage], window_hours: float, lots: Sequence[LotSpan] = ()
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
    end = max((_finite(s.end_hours) for s in stages), default=0.0)
    numbers = _numbered(stages, frame)
    legend = _legend(stages, numbers, plot_bottom + AXIS + 8, bool(lots))
    height = plot_bottom + AXIS + 8 + len(legend[1]) * LEGEND_LINE + 6
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" id="calendar-gantt" width="{WIDTH}" '
        f'height="{height}" viewBox="0 0 {WIDTH} {height}" role="img" '
        f'aria-label="{escape(_aria(stages, window_hours))}" '
        'style="max-width:100%;height:auto" font-family="sans-serif">',
        _DEFS,
        *_lane_labels(frame),
        *_ticks(frame),
        *_slack(frame, end, window_hours),
        *(markup for s in stages for markup in _stage_bars(frame, s, numbers.get(s.key))),
        *_overrun(frame, window_hours, end),
        *_lot_bars(frame, lots),
        _window_rule(frame, window_hours),
        *legend[0],
        "</svg>",
    ]
    return "".join(out)


_DEFS = (
    '<defs><pattern id="slack-hatch" width="6" height="6" patternUnits="userSpaceOnUse" '
    f'patternTransform="rotate(45)"><rect width="3" height="6" fill="{SLACK}"/></pattern>'
    '<pattern id="cut-hatch" width="5" height="5" patternUnits="userSpaceOnUse" '
    'patternTransform="rotate(-45)"><rect width="5" height="5" fill="#eeeeee"/>'
    f'<rect width="2" height="5" fill="{CUT}"/></pattern>'
    '<pattern id="running-stripes" width="6" height="6" patternUnits="userSpaceOnUse" '
    f'patternTransform="rotate(45)"><rect width="6" height="6" fill="{DONE}"/>'
    f'<rect width="3" height="6" fill="{STAGE}"/></pattern></defs>'
)


def _lane_labels(frame: _Frame) -> list[str]:
    out = []
    for i, name in enumerate(frame.lanes):
        top = TOP + i * LANE
        out.append(
            f'<text x="{LABEL - 6}" y="{top + 19}" font-size="11" text-anchor="end">'
            f"{escape(name[:18])}</text>"
            f'<line x1="{LABEL}" y1="{top + LANE}" x2="{WIDTH - RIGHT}" y2="{top + LANE}" '
            'stroke="#eee"/>'
        )
    if frame.lot_lane is not None:
        out.append(
            f'<text x="{LABEL - 6}" y="{TOP + frame.lot_lane * LANE + 19}" font-size="11" '
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


def _slack(frame: _Frame, end: float, window_hours: float) -> list[str]:
    """From the calendar's end to the window's end, to scale."""
    if not math.isfinite(window_hours) or window_hours <= end:
        return []
    sx, ex = frame.x(end), frame.x(window_hours)
    return [
        f'<rect class="slack" x="{sx:.1f}" y="{TOP}" width="{max(ex - sx, 0):.1f}" '
        f'height="{len(frame.lanes) * LANE}" fill="url(#slack-hatch)">'
        f"<title>{_h(window_hours - end)} h to spare</title></rect>"
        f'<text x="{sx + 4:.1f}" y="{TOP - 7}" font-size="11">slack '
        f"{_h(window_hours - end)} h</text>"
    ]


def _overrun(frame: _Frame, window_hours: float, end: float) -> list[str]:
    """Past the window, in the warning colour: how far the calendar runs over."""
    if not math.isfinite(window_hours) or end <= window_hours + 1e-9:
        return []
    wx, ex = frame.x(window_hours), frame.x(end)
    return [
        f'<rect class="overrun" x="{wx:.1f}" y="{TOP}" width="{max(ex - wx, 1.5):.1f}" '
        f'height="{len(frame.lanes) * LANE}" fill="{WINDOW}" fill-opacity="0.18">'
        f"<title>{_h(end - window_hours)} h over the window</title></rect>"
        f'<text x="{wx + 4:.1f}" y="{TOP - 7}" font-size="11" fill="{WINDOW}">'
        f"{_h(end - window_hours)} h over</text>"
    ]


def _stage_fill(s: GanttStage) -> tuple[str, str, str]:
    """The class suffix, the fill and the outline of a stage's current bar."""
    outline = ' stroke="#000" stroke-width="1.5"' if s.critical else ""
    if s.cut:
        return " cut", "url(#cut-hatch)", f' stroke="{CUT}"'
    if s.resource is None:
        return f" {s.state} human", HUMAN, outline
    fill = {"done": DONE, "running": "url(#running-stripes)"}.get(s.state, STAGE)
    return f" {s.state}" + (" critical" if s.critical else ""), fill, outline


def _committed_bar(frame: _Frame, s: GanttStage, y: int) -> list[str]:
    if s.planned_start is None or s.planned_end is None:
        return []
    px = frame.x(s.planned_start)
    width = max(frame.x(s.planned_end) - px, 1.5)
    return [
        f'<rect class="committed" x="{px:.1f}" y="{y}" width="{width:.1f}" height="5" '
        f'fill="none" stroke="{PLAN}" stroke-dasharray="3 2"><title>{escape(s.key)}: '
        f"planned {_h(s.planned_start)}–{_h(s.planned_end)} h</title></rect>"
    ]


def _stage_title(s: GanttStage) -> str:
    title = f"{s.key}: {_h(s.start_hours)}–{_h(s.end_hours)} h, {s.state}"
    if s.cut:
        title += " (cut: only what ran before the cut)"
    if s.planned_start is not None and s.planned_end is not None:
        title += f"; planned {_h(s.planned_start)}–{_h(s.planned_end)} h"
    return title + (" (critical path)" if s.critical else "")


def _stage_bars(frame: _Frame, s: GanttStage, number: int | None) -> list[str]:
    lane = frame.lanes.index(s.resource) if s.resource else len(frame.lanes) - 1
    top = TOP + lane * LANE + 2
    y = top + 8
    cls, fill, stroke = _stage_fill(s)
    start = frame.x(s.start_hours)
    width = max(frame.x(s.end_hours) - start, 2.0)
    out = [
        *_committed_bar(frame, s, top),
        f'<rect class="stage{cls}" x="{start:.1f}" y="{y}" width="{width:.1f}" '
        f'height="{LANE - 13}" fill="{fill}"{stroke}><title>{escape(_stage_title(s))}</title>'
        "</rect>",
    ]
    dark = s.resource and not s.cut and s.state == "done"
    colour = "#fff" if dark else "#000"
    if number is None:
        out.append(
            f'<text class="label-stage" x="{start + 3:.1f}" y="{y + 12}" font-size="10" '
            f'fill="{colour}">{escape(s.key)}</text>'
        )
    elif width >= 6:  # a number fits where a name does not (8 px digits on narrow bars)
        size = 10 if width >= 14 else 8
        out.append(
            f'<text class="label-stage" x="{start + width / 2:.1f}" y="{y + 12}" '
            f'font-size="{size}" text-anchor="middle" fill="{colour}">{number}</text>'
        )
    else:  # too narrow even for its number: the number just after the bar
        out.append(
            f'<text class="label-stage" x="{start + width + 2:.1f}" y="{y + 12}" '
            f'font-size="10">{number}</text>'
        )
    return out


def _lot_bars(frame: _Frame, lots: Sequence[LotSpan]) -> list[str]:
    """Each reserved lot where it runs, its end marked across the plot."""
    if frame.lot_lane is None:
        return []
    out = []
    y = TOP + frame.lot_lane * LANE + 6
    for lot in lots:
        x = frame.x(lot.start)
        ex = frame.x(lot.end)
        width = max(ex - x, 2.0)
        text = f"{lot.label} · {_h(lot.hours)} h"
        out.append(
            f'<rect class="lot" x="{x:.1f}" y="{y}" width="{width:.1f}" '
            f'height="{LANE - 13}" fill="{LOT}" stroke="#fff">'
            f"<title>{escape(lot.label)}: {_h(lot.start)}–{_h(lot.end)} h</title></rect>"
            f'<line class="lot-end" x1="{ex:.1f}" y1="{TOP}" x2="{ex:.1f}" '
            f'y2="{frame.plot_bottom}" stroke="{LOT}" stroke-dasharray="4 3">'
            f"<title>lot ends at {_h(lot.end)} h</title></line>"
        )
        if width > len(text) * CHAR + 6:
            out.append(f'<text x="{x + 3:.1f}" y="{y + 12}" font-size="10">{escape(text)}</text>')
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


def _kinds(stages: Sequence[GanttStage], lots: bool) -> list[tuple[str, str, str]]:
    """The legend's swatches, only for what is drawn."""
    states = {s.state for s in stages}
    kinds = [("none", "as committed", f' stroke="{PLAN}" stroke-dasharray="3 2"')]
    if "done" in states:
        kinds.append((DONE, "observed", ""))
    if "running" in states:
        kinds.append(("url(#running-stripes)", "running", ""))
    kinds.append((STAGE, "forecast", ""))
    kinds.append(("none", "critical path", ' stroke="#000" stroke-width="1.5"'))
    if any(s.resource is None for s in stages):
        kinds.append((HUMAN, "people", ""))
    if "cut" in states:
        kinds.append(("url(#cut-hatch)", "cut (what ran before the cut)", f' stroke="{CUT}"'))
    if lots:
        kinds.append((LOT, "reserved lot (dashed: its end)", ""))
    return kinds


def _legend(
    stages: Sequence[GanttStage], numbers: dict[str, int], top: int, lots: bool
) -> tuple[list[str], list[int]]:
    """The key to the colours (only those drawn), then the numbered stages, wrapped in lines.
    Returns the markup and the y of each line (the chart's height grows with them)."""
    out: list[str] = ['<g class="gantt-legend">']
    y, x = top + LEGEND_LINE - 4, float(LABEL)
    lines = [y]
    for fill, text, extra in _kinds(stages, lots):
        needed = 18 + len(text) * CHAR + 10
        if x + needed > WIDTH - RIGHT:
            y, x = y + LEGEND_LINE, float(LABEL)
            lines.append(y)
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
