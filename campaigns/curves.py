"""A metric curve as an inline SVG (pure: no Django, no I/O), for the run admin page.

Steps map linearly to x, values to y (bottom = the smallest finite value). Finite points are
joined by a line, broken wherever a non-finite point sits; a non-finite point is drawn as a red
mark on the top edge with its token as a tooltip, and the step where a stop rule ended the run
as a dashed vertical line labelled "stop". Units: steps and metric values in, pixels out.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from html import escape

from .series import Point, token

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
    finite = [v for _, v in points if math.isfinite(v)]
    lo_val, hi_val = (min(finite), max(finite)) if finite else (0.0, 1.0)
    if hi_val == lo_val:
        lo_val, hi_val = lo_val - 0.5, hi_val + 0.5
    plot_w = WIDTH - _LEFT - _RIGHT
    plot_h = HEIGHT - _TOP - _BOTTOM
    span = max(hi_step - lo_step, 1)

    def x(step: int) -> float:
        return _LEFT + (step - lo_step) / span * plot_w

    def y(value: float) -> float:
        return _TOP + (hi_val - value) / (hi_val - lo_val) * plot_h

    bottom = _TOP + plot_h
    parts.append(
        f'<rect x="{_LEFT}" y="{_TOP}" width="{plot_w}" height="{plot_h}" fill="none" '
        'stroke="#ddd"/>'
    )
    for value, ypos in ((hi_val, _TOP + 4), (lo_val, bottom)):
        parts.append(
            f'<text x="{_LEFT - 4}" y="{ypos:.1f}" font-size="10" text-anchor="end">'
            f"{_fmt(value)}</text>"
        )
    for step, anchor in ((lo_step, "start"), (hi_step, "end")):
        parts.append(
            f'<text x="{x(step):.1f}" y="{HEIGHT - 8}" font-size="10" text-anchor="{anchor}">'
            f"step {step}</text>"
        )
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
            f'fill="{NON_FINITE}"><title>{tok} at step {step}</title></rect>'
        )
    if segment:
        segments.append(segment)
    for seg in segments:
        if len(seg) == 1:
            cx, cy = seg[0].split(",")
            parts.append(f'<circle cx="{cx}" cy="{cy}" r="1.5" fill="{LINE}"/>')
        else:
            parts.append(
                f'<polyline points="{" ".join(seg)}" fill="none" stroke="{LINE}" '
                'stroke-width="1.2"/>'
            )
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
