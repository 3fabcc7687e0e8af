"""A metric curve as an inline SVG (pure: no Django, no I/O), for the run admin page.

Steps map linearly to x, values to y (bottom = the smallest finite value). Finite points are
joined by a line, broken wherever a non-finite point sits; a non-finite point is drawn as a red
mark on the top edge with its token as a tooltip, and the step where a stop rule ended the run
as a dashed vertical line labelled "stop". Units: steps and metric values in, pixels out.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from html import escape

from campaigns.domain.downsampling import Point, token

WIDTH = 640
HEIGHT = 180
_LEFT = 56
_RIGHT = 12
_TOP = 14
_BOTTOM = 24
LINE = "#417690"
NON_FINITE = "#ba2121"
STOP = "#6a3d9a"


def _fmt(value: float) -> str:
    return f"{value:.4g}"


def curve_svg(
    name: str, points: Sequence[Point], *, count: int | None = None, stop_step: int | None = None
) -> str:
    """The SVG markup of one metric; ``count`` is the stored point count shown in the title."""
    title = f"{name}: {count if count is not None else len(points)} points"
    head = (
        f'<svg xmlns="http://www.w3.org/2000/svg" class="metric-curve" width="{WIDTH}" '
        f'height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" '
        f'aria-label="{escape(title)}">'
    )
    parts = [head, f'<text x="{_LEFT}" y="11" font-size="11">{escape(title)}</text>']
    if not points:
        parts.append(f'<text x="{_LEFT}" y="{HEIGHT // 2}" font-size="12">no points</text></svg>')
        return "".join(parts)
    steps = [s for s, _ in points]
    lo_step, hi_step = min(steps), max(steps)
    if stop_step is not None:
        lo_step, hi_step = min(lo_step, stop_step), max(hi_step, stop_step)
    lo_val, hi_val = _value_range([v for _, v in points])
    x, y = _frame(parts, lo_step, hi_step, lo_val, hi_val)
    bottom = HEIGHT - _BOTTOM
    lines, marks = _lines(points, x, y, colour=LINE)
    parts.extend(lines)
    parts.extend(marks)
    if stop_step is not None:
        sx = x(stop_step)
        parts.append(
            f'<line class="stop" x1="{sx:.1f}" y1="{_TOP}" x2="{sx:.1f}" y2="{bottom}" '
            f'stroke="{STOP}" stroke-dasharray="4 3"><title>stopped at step {stop_step}</title>'
            f'</line><text x="{sx - 3:.1f}" y="{_TOP + 20}" font-size="10" fill="{STOP}" '
            'text-anchor="end">stop</text>'
        )
    parts.append("</svg>")
    return "".join(parts)


def _lines(
    points: Sequence[Point],
    x: Callable[[int], float],
    y: Callable[[float], float],
    *,
    colour: str,
    dashed: bool = False,
    label: str = "",
) -> tuple[list[str], list[str]]:
    """The polylines of the finite stretches of ``points`` and the marks of its non-finite
    points (on the top edge), as SVG elements; ``label`` prefixes the marks' tooltips."""
    dash = ' stroke-dasharray="5 3"' if dashed else ""
    segment: list[str] = []
    segments: list[list[str]] = []
    marks: list[str] = []
    for step, value in points:
        tok = token(value)
        if tok is None:
            segment.append(f"{x(step):.1f},{y(value):.1f}")
            continue
        if segment:
            segments.append(segment)
            segment = []
        marks.append(
            f'<rect class="non-finite" x="{x(step) - 2:.1f}" y="{_TOP}" width="4" height="8" '
            f'fill="{NON_FINITE}"><title>{escape(label)}{tok} at step {step}</title></rect>'
        )
    if segment:
        segments.append(segment)
    lines: list[str] = []
    for seg in segments:
        if len(seg) == 1:
            cx, cy = seg[0].split(",")
            lines.append(f'<circle cx="{cx}" cy="{cy}" r="1.5" fill="{colour}"/>')
        else:
            lines.append(
                f'<polyline points="{" ".join(seg)}" fill="none" stroke="{colour}" '
                f'stroke-width="1.2"{dash}/>'
            )
    return lines, marks


def _frame(
    parts: list[str], lo_step: int, hi_step: int, lo_val: float, hi_val: float
) -> tuple[Callable[[int], float], Callable[[float], float]]:
    """Draw the plot box and its axis labels into ``parts``; the step→x and value→y maps."""
    plot_w = WIDTH - _LEFT - _RIGHT
    plot_h = HEIGHT - _TOP - _BOTTOM
    span = max(hi_step - lo_step, 1)

    def x(step: int) -> float:
        return _LEFT + (step - lo_step) / span * plot_w

    def y(value: float) -> float:
        return _TOP + (hi_val - value) / (hi_val - lo_val) * plot_h

    parts.append(
        f'<rect x="{_LEFT}" y="{_TOP}" width="{plot_w}" height="{plot_h}" fill="none" '
        'stroke="#ddd"/>'
    )
    for value, ypos in ((hi_val, _TOP + 4), (lo_val, _TOP + plot_h)):
        parts.append(
            f'<text x="{_LEFT - 4}" y="{ypos:.1f}" font-size="10" text-anchor="end">'
            f"{_fmt(value)}</text>"
        )
    for step, anchor in ((lo_step, "start"), (hi_step, "end")):
        parts.append(
            f'<text x="{x(step):.1f}" y="{HEIGHT - 8}" font-size="10" text-anchor="{anchor}">'
            f"step {step}</text>"
        )
    return x, y


# Beyond this the span hi - lo of two finite values could overflow to inf.
_VALUE_LIMIT = 1e300


def _value_range(values: Sequence[float]) -> tuple[float, float]:
    """The value axis: the finite values' range, clamped so its span stays finite; one value
    (a constant lr, a one-point series) is padded by 5% of its size, so the pad survives at
    any magnitude (a ±0.5 pad is lost at 7.8e24 and swamps 2e-4)."""
    finite = [v for v in values if math.isfinite(v)]
    lo_val, hi_val = (min(finite), max(finite)) if finite else (0.0, 1.0)
    lo_val, hi_val = max(lo_val, -_VALUE_LIMIT), min(hi_val, _VALUE_LIMIT)
    if hi_val > lo_val:
        return lo_val, hi_val
    pad = abs(lo_val) * 0.05
    if not lo_val - pad < lo_val + pad:
        pad = 0.5  # zero, or too small for a relative pad
    return lo_val - pad, hi_val + pad


# Item colours for the overlay (a colour-blind-safe qualitative palette), cycled.
PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#17becf")


@dataclass(frozen=True)
class Overlaid:
    """One run's series on the overlay: its label (run id), colour and whether dashed."""

    label: str
    colour: str
    dashed: bool
    points: Sequence[Point]


def overlay_svg(name: str, lines: Sequence[Overlaid]) -> str:
    """One metric of several runs on shared axes (steps across, values up), each run a line
    in its colour, dashed when asked (pilots); the legend is the page's, not the SVG's."""
    title = f"{name}: {len(lines)} runs"
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="metric-overlay" width="{WIDTH}" '
        f'height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" '
        f'aria-label="{escape(title)}">',
        f'<text x="{_LEFT}" y="11" font-size="11">{escape(title)}</text>',
    ]
    steps = [s for line in lines for s, _ in line.points]
    if not steps:
        parts.append(f'<text x="{_LEFT}" y="{HEIGHT // 2}" font-size="12">no points</text></svg>')
        return "".join(parts)
    lo_val, hi_val = _value_range([v for line in lines for _, v in line.points])
    x, y = _frame(parts, min(steps), max(steps), lo_val, hi_val)
    all_marks: list[str] = []
    for line in lines:
        drawn, marks = _lines(
            line.points, x, y, colour=line.colour, dashed=line.dashed, label=f"{line.label}: "
        )
        parts.append(f'<g class="run"><title>{escape(line.label)}</title>{"".join(drawn)}</g>')
        all_marks.extend(marks)
    parts.extend(all_marks)
    parts.append("</svg>")
    return "".join(parts)
