"""Per-metric summaries and step-bucket rollups, and the series drawn from them
(docs/metric_store.md §1: reading a long run costs what is shown).

Pure: no Django. A point is ``(step, value)``, ``value`` a float that may be NaN or ±Inf.

Ingest folds each batch into two aggregates, in the order the points arrived:

- a **summary** per (run, metric): count, first and last step, the last point (largest step;
  of equal steps the one logged later), the finite minimum and maximum, the non-finite count;
- a **rollup** per (run, metric, level k, bucket ``step >> k``) for k in ``LEVELS``: count,
  the finite minimum and maximum with their steps (of equal values the smaller step), the
  non-finite count and the first and last non-finite point (smallest / largest step).

``merge`` combines an aggregate with a later one; folding batch by batch equals folding all
points at once (the database upsert applies the same rule, campaigns/services/metric_store.py).

The series at ``max_points`` (``series_from_rollups``): a metric of at most ``max_points``
points is read whole; a longer one takes the finest level whose bucket span fits
``max_points // 2`` buckets, keeps each bucket's minimum and maximum, every non-finite point
when they fit in ``max_points - 1`` (else each bucket's first and last non-finite point) and
the last point, then applies campaigns/domain/downsampling.py's rule to those candidates. So
reading a run of any length costs at most ``max_points // 2`` rollup rows plus its non-finite
points, and keeps each bucket's extremes, the non-finite points and the last point.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from campaigns.domain import downsampling

Point = tuple[int, float]

# Bucket widths 2^k steps: 64 … 1,048,576. Each level costs about 1/4 of the one below, all of
# them together about 1/48 of a row per point; the coarsest keeps a 10^9-step run at 1,000 rows.
LEVELS: tuple[int, ...] = (6, 8, 10, 12, 14, 16, 18, 20)

_VALUES = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}


def value_of(token: str) -> float:
    """The float a non-finite token stands for."""
    return _VALUES[token]


@dataclass(frozen=True)
class Summary:
    count: int
    first_step: int
    last_step: int
    last_value: float  # may be non-finite
    min_value: float | None  # finite values only; None when there are none
    max_value: float | None
    non_finite: int


@dataclass(frozen=True)
class Bucket:
    count: int
    min_step: int | None  # the finite minimum's step (None: no finite point in the bucket)
    min_value: float | None
    max_step: int | None
    max_value: float | None
    non_finite: int
    first_nf_step: int | None
    first_nf: str  # token of the first non-finite point ("" when none)
    last_nf_step: int | None
    last_nf: str


def _lower(a: float | None, b: float | None) -> float | None:
    return b if a is None else a if b is None else min(a, b)


def _upper(a: float | None, b: float | None) -> float | None:
    return b if a is None else a if b is None else max(a, b)


def merge_summary(old: Summary, new: Summary) -> Summary:
    """``old`` then ``new`` (logged later): the later wins a tie on the last step."""
    later = new.last_step >= old.last_step
    return Summary(
        count=old.count + new.count,
        first_step=min(old.first_step, new.first_step),
        last_step=new.last_step if later else old.last_step,
        last_value=new.last_value if later else old.last_value,
        min_value=_lower(old.min_value, new.min_value),
        max_value=_upper(old.max_value, new.max_value),
        non_finite=old.non_finite + new.non_finite,
    )


def _pick(
    old: tuple[int | None, float | None], new: tuple[int | None, float | None], low: bool
) -> tuple[int | None, float | None]:
    (os_, ov), (ns, nv) = old, new
    if nv is None or ns is None:
        return old
    if ov is None or os_ is None:
        return new
    better = nv < ov if low else nv > ov
    return new if better or (nv == ov and ns < os_) else old


def merge(old: Bucket, new: Bucket) -> Bucket:
    """``old`` then ``new`` (logged later), by the rule in the module docstring."""
    min_step, min_value = _pick((old.min_step, old.min_value), (new.min_step, new.min_value), True)
    max_step, max_value = _pick((old.max_step, old.max_value), (new.max_step, new.max_value), False)
    first_new = new.first_nf_step is not None and (
        old.first_nf_step is None or new.first_nf_step < old.first_nf_step
    )
    last_new = new.last_nf_step is not None and (
        old.last_nf_step is None or new.last_nf_step >= old.last_nf_step
    )
    return Bucket(
        count=old.count + new.count,
        min_step=min_step,
        min_value=min_value,
        max_step=max_step,
        max_value=max_value,
        non_finite=old.non_finite + new.non_finite,
        first_nf_step=new.first_nf_step if first_new else old.first_nf_step,
        first_nf=new.first_nf if first_new else old.first_nf,
        last_nf_step=new.last_nf_step if last_new else old.last_nf_step,
        last_nf=new.last_nf if last_new else old.last_nf,
    )


def summarize(points: Iterable[Point]) -> Summary | None:
    """The summary of ``points`` in logging order (as merging each in turn); None when empty."""
    count = non_finite = 0
    first = last = 0
    last_value = 0.0
    low: float | None = None
    high: float | None = None
    isfinite = math.isfinite
    for step, value in points:
        if count == 0:
            first = last = step
            last_value = value
        else:
            if step < first:
                first = step
            if step >= last:
                last, last_value = step, value
        count += 1
        if isfinite(value):
            low = value if low is None or value < low else low
            high = value if high is None or value > high else high
        else:
            non_finite += 1
    if count == 0:
        return None
    return Summary(count, first, last, last_value, low, high, non_finite)


def _finest(points: Iterable[Point], k: int) -> dict[int, list[Any]]:
    """Level ``k``'s buckets as mutable lists in one pass (the ingest's hot loop: no objects
    per point). Fields in Bucket's order."""
    out: dict[int, list[Any]] = {}
    isfinite = math.isfinite
    for step, value in points:
        b = out.get(step >> k)
        if b is None:
            b = out[step >> k] = [0, None, None, None, None, 0, None, "", None, ""]
        b[0] += 1
        if isfinite(value):
            if b[2] is None or value < b[2] or (value == b[2] and step < b[1]):
                b[1], b[2] = step, value
            if b[4] is None or value > b[4] or (value == b[4] and step < b[3]):
                b[3], b[4] = step, value
        else:
            _fold_non_finite(b, step, value)
    return out


def _fold_non_finite(b: list[Any], step: int, value: float) -> None:
    """Count a non-finite point into bucket ``b`` and keep the first and last one's token (out
    of ``_finest``'s loop: such points are rare, so the finite path pays no call)."""
    tok = downsampling.token(value) or ""
    b[5] += 1
    if b[6] is None or step < b[6]:
        b[6], b[7] = step, tok
    if b[8] is None or step >= b[8]:
        b[8], b[9] = step, tok


def rollup(
    points: Iterable[Point], levels: Sequence[int] = LEVELS
) -> dict[tuple[int, int], Bucket]:
    """Rollups of ``points`` (logging order) by ``(level, bucket)``, as if each point were
    merged in turn. The finest level is folded from the points; each coarser one from the level
    below, whose buckets cover disjoint steps, so their order cannot break a tie."""
    ordered = sorted(levels)
    if not ordered:
        return {}
    current = {b: Bucket(*fields) for b, fields in _finest(points, ordered[0]).items()}
    out = {(ordered[0], b): bucket for b, bucket in current.items()}
    for below, k in itertools.pairwise(ordered):
        coarser: dict[int, Bucket] = {}
        for b, bucket in current.items():
            key = b >> (k - below)
            old = coarser.get(key)
            coarser[key] = bucket if old is None else merge(old, bucket)
        out.update(((k, b), bucket) for b, bucket in coarser.items())
        current = coarser
    return out


def merge_rollups(
    old: dict[tuple[int, int], Bucket], new: dict[tuple[int, int], Bucket]
) -> dict[tuple[int, int], Bucket]:
    merged = dict(old)
    for key, bucket in new.items():
        merged[key] = bucket if key not in merged else merge(merged[key], bucket)
    return merged


def level_for(summary: Summary, max_points: int) -> int:
    """The finest level whose buckets between the first and last step fit ``max_points // 2``;
    the coarsest when none does."""
    room = max(1, max_points // 2)
    for k in LEVELS:
        if (summary.last_step >> k) - (summary.first_step >> k) + 1 <= room:
            return k
    return LEVELS[-1]


def candidates(
    summary: Summary,
    buckets: Iterable[Bucket],
    non_finite_points: Sequence[Point] | None,
) -> list[Point]:
    """The points a long series is drawn from, in step order: each bucket's extremes, the
    non-finite points (``non_finite_points`` when read whole, else each bucket's first and last)
    and the last point, which sorts last among equal steps."""
    ranked: dict[tuple[int, str], tuple[int, int, float]] = {}

    def add(step: int, value: float, rank: int) -> None:
        ranked.setdefault((step, _same_value(value)), (step, rank, value))

    for b in buckets:
        if b.min_step is not None and b.min_value is not None:
            add(b.min_step, b.min_value, 0)
        if b.max_step is not None and b.max_value is not None:
            add(b.max_step, b.max_value, 0)
        if non_finite_points is None:
            if b.first_nf_step is not None:
                add(b.first_nf_step, value_of(b.first_nf), 1)
            if b.last_nf_step is not None:
                add(b.last_nf_step, value_of(b.last_nf), 1)
    for step, value in non_finite_points or ():
        add(step, value, 1)
    ranked[(summary.last_step, _same_value(summary.last_value))] = (
        summary.last_step,
        2,
        summary.last_value,
    )
    return [(step, value) for step, _rank, value in sorted(ranked.values(), key=_order)]


def _same_value(value: float) -> str:
    """What makes two candidates at one step the same point: their value, NaN equal to NaN
    (by its text) and -0.0 to 0.0 (``+ 0.0`` drops the sign of zero; a store may keep either)."""
    return repr(value + 0.0)


def _order(entry: tuple[int, int, float]) -> tuple[int, int]:
    return entry[0], entry[1]


def series_from_rollups(
    summary: Summary,
    buckets: Iterable[Bucket],
    non_finite_points: Sequence[Point] | None,
    max_points: int,
) -> list[Point]:
    """At most ``max_points`` points of a series longer than ``max_points``, from its summary,
    the rollups of ``level_for(summary, max_points)`` and its non-finite points when they fit
    (None otherwise)."""
    return downsampling.downsample(candidates(summary, buckets, non_finite_points), max_points)


def series_from_points(points: Sequence[Point], max_points: int) -> list[Point]:
    """The same series computed from every raw point in logging order: what the rollup read
    must equal (the property the tests check)."""
    summary = summarize(points)
    if summary is None:
        return []
    if summary.count <= max_points:
        return sorted(points, key=lambda p: p[0])
    k = level_for(summary, max_points)
    buckets = [b for (level, _), b in sorted(rollup(points, (k,)).items()) if level == k]
    non_finite = [p for p in points if not math.isfinite(p[1])]
    nf = sorted(non_finite, key=lambda p: p[0]) if len(non_finite) <= max_points - 1 else None
    return series_from_rollups(summary, buckets, nf, max_points)
