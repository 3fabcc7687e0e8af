"""The data behind the interactive charts (campaigns/static/campaigns/charts.js), as plain JSON
(pure: no Django, no I/O).

uPlot draws aligned columns: one shared, sorted x (the union of the runs' steps) and one y
column per run with ``None`` where that run logged nothing at a step. JSON has no NaN or
infinity, so a non-finite point is ``None`` in its column and listed apart under
``non_finite`` (the chart marks it on the top edge, as the SVG does). The series arrive already
downsampled (campaigns/domain/downsampling.py). Units: steps and metric values as logged.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from campaigns.charts.curves import LINE, Overlaid
from campaigns.domain.downsampling import Point, token


def chart_payload(
    title: str,
    lines: Sequence[Overlaid],
    *,
    stop_step: int | None = None,
    threshold: float | None = None,
) -> dict[str, Any]:
    """The JSON the page embeds (``json_script``) for one chart of one or more runs."""
    steps = sorted({step for line in lines for step, _ in line.points})
    at = {step: i for i, step in enumerate(steps)}
    series: list[dict[str, Any]] = []
    non_finite: list[dict[str, Any]] = []
    for line in lines:
        column: list[float | None] = [None] * len(steps)
        for step, value in line.points:
            tok = token(value)
            if tok is None:
                column[at[step]] = value
            else:
                non_finite.append({"label": line.label, "step": step, "token": tok})
        series.append(
            {"label": line.label, "colour": line.colour, "dashed": line.dashed, "values": column}
        )
    shown_threshold = threshold if threshold is not None and math.isfinite(threshold) else None
    return {
        "title": title,
        "x": steps,
        "series": series,
        "stop_step": stop_step,
        "threshold": shown_threshold,
        "non_finite": non_finite,
    }


def single(name: str, points: Sequence[Point], *, stop_step: int | None = None) -> dict[str, Any]:
    """One run's metric (the run page)."""
    return chart_payload(name, [Overlaid(name, LINE, False, points)], stop_step=stop_step)
