"""Downsampling a metric series for reading and drawing (docs/api.md: reading a run's metrics).

Pure: no Django. A series is a list of ``(step, value)`` pairs in step order, ``value`` a float
that may be NaN or ±Inf. ``downsample(points, max_points)`` returns at most ``max_points`` of
those pairs, in step order, chosen by this rule:

1. A series of at most ``max_points`` points is returned whole.
2. The last point is always kept (it is where the run is now).
3. Every non-finite point is kept (a NaN is the event a reader looks for). Only when the
   non-finite points alone do not fit in ``max_points - 1`` are they thinned: first to the
   first and last point of each stretch of consecutive equal tokens (where a divergence starts
   and ends), then, if still too many, to evenly spaced ones.
4. The remaining budget goes to the finite points, split into ``budget // 2`` buckets of
   (nearly) equal point counts; each bucket keeps its minimum and its maximum, so a spike
   survives however narrow it is. With a budget of one, the single finite maximum is kept.

Buckets count points, not steps: a series logged densely early and sparsely late keeps detail
where the data is.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

Point = tuple[int, float]


def token(value: float) -> str | None:
    """The JSON spelling of a non-finite value (``NaN``, ``Infinity``, ``-Infinity``), else None."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    return None


def _evenly(indices: Sequence[int], count: int) -> list[int]:
    """``count`` of ``indices`` spread evenly, first and last included when count ≥ 2."""
    if count <= 0:
        return []
    if count >= len(indices):
        return list(indices)
    if count == 1:
        return [indices[-1]]
    last = len(indices) - 1
    return [indices[round(i * last / (count - 1))] for i in range(count)]


def _thin_non_finite(points: Sequence[Point], indices: list[int], budget: int) -> list[int]:
    if len(indices) <= budget:
        return indices
    edges: list[int] = []
    for pos, i in enumerate(indices):
        prev_same = (
            pos > 0 and indices[pos - 1] == i - 1 and token(points[i - 1][1]) == token(points[i][1])
        )
        next_same = (
            pos + 1 < len(indices)
            and indices[pos + 1] == i + 1
            and token(points[i + 1][1]) == token(points[i][1])
        )
        if not (prev_same and next_same):
            edges.append(i)
    return _evenly(edges, budget)


def downsample(points: Sequence[Point], max_points: int) -> list[Point]:
    """At most ``max_points`` of ``points`` (step order kept) by the rule in the module docstring.

    ``max_points`` must be at least 1.
    """
    if max_points < 1:
        raise ValueError("max_points must be at least 1")
    n = len(points)
    if n <= max_points:
        return list(points)
    last = n - 1
    non_finite = [i for i in range(last) if not math.isfinite(points[i][1])]
    keep = set(_thin_non_finite(points, non_finite, max_points - 1))
    keep.add(last)
    budget = max_points - len(keep)
    finite = [i for i in range(last) if math.isfinite(points[i][1])]
    if budget >= 1 and finite:
        if budget == 1 or len(finite) <= budget:
            chosen = finite if len(finite) <= budget else [max(finite, key=lambda i: points[i][1])]
            keep.update(chosen)
        else:
            buckets = budget // 2
            for b in range(buckets):
                lo = b * len(finite) // buckets
                hi = (b + 1) * len(finite) // buckets
                chunk = finite[lo:hi]
                if not chunk:
                    continue
                keep.add(min(chunk, key=lambda i: points[i][1]))
                keep.add(max(chunk, key=lambda i: points[i][1]))
    return [points[i] for i in sorted(keep)]


def as_json_value(value: float) -> float | str:
    """A point's value for JSON: the float, or its token when not finite (JSON has no NaN)."""
    return token(value) or value
