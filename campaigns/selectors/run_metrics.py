"""Reading a run's logged data back (docs/api.md: reading a run's metrics).

The reads the API and the run admin page share. They cost what they show
(docs/metric_store.md §1): names and counts come from the per-(run, metric) summaries; a series
of at most ``max_points`` points comes off the primary key ``(run, key, step, seq)`` whole, a longer
one from one level of its rollups plus its non-finite points (campaigns/domain/
metric_rollups.py), thinned by the pure rule in campaigns/domain/downsampling.py.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.db.models import Count, Max, QuerySet

from campaigns.domain import downsampling as series
from campaigns.domain import metric_rollups as mr
from campaigns.models import (
    MetricPoint,
    MetricRollup,
    MetricSummary,
    Run,
    StopRule,
    StopRuleKind,
)
from campaigns.selectors import raw_points as raw

DEFAULT_MAX_POINTS = 1000
LIMIT_MAX_POINTS = 10_000

_NON_FINITE = {"NaN": float("nan"), "Infinity": float("inf"), "-Infinity": float("-inf")}


@dataclass(frozen=True)
class Series:
    name: str
    count: int  # every stored point of this metric
    points: list[series.Point]  # at most max_points of them


def metric_names(run: Run) -> list[tuple[str, int]]:
    """The run's metric names with their point counts, by name."""
    rows = MetricSummary.objects.filter(run=run).values_list("name", "count").order_by("name")
    return [(name, count) for name, count in rows]


def full_series(run: Run, name: str, *, non_finite_only: bool = False) -> list[series.Point]:
    """Every point of one metric in step order (equal steps in logging order), non-finite
    values as floats; ``non_finite_only``: only those (off their partial index)."""
    key = MetricSummary.objects.filter(run=run, name=name).values_list("pk", flat=True).first()
    if key is None:
        return []
    return _points_of_keys({key: run.pk}, non_finite_only=non_finite_only).get(run.pk, [])


def _points_at(run: Run, name: str, steps: list[int]) -> list[raw.Raw]:
    # The key first (one indexed row), so the steps are looked up on the primary key's
    # (run, key, step) prefix rather than through a join the planner may hash.
    key = MetricSummary.objects.filter(run=run, name=name).values_list("pk", flat=True).first()
    return [] if key is None else raw.points_at(run.pk, key, steps)


def logged_at(run: Run, name: str, points: Sequence[series.Point]) -> list[tuple[int, Any]]:
    """(step, when it was logged) of the given points of one metric: one indexed query. A
    point the retention dropped (docs/domain.md §27) takes its metric's last logging time."""
    steps = [step for step, _value in points]
    when = {p.step: p.created_at for p in _points_at(run, name, steps)}
    if len(when) < len(set(steps)):
        last = MetricSummary.objects.filter(run=run, name=name).values_list("last_at", flat=True)
        return [(step, when.get(step) or last[0]) for step in steps]
    return [(step, when[step]) for step in steps]


def client_marks(
    run: Run, name: str, points: Sequence[series.Point]
) -> list[tuple[int | None, str]]:
    """(client timestamp in ms, logged model id) of the given points, as an MLflow client sent
    them ((None, "") for points logged without): one indexed query."""
    steps = [step for step, _value in points]
    # Ordered by (step, seq): of equal steps the later-logged point's marks.
    marks = {p.step: (p.timestamp_ms, p.model_id) for p in _points_at(run, name, steps)}
    return [marks.get(step, (None, "")) for step in steps]


def metric_series(run: Run, name: str, max_points: int = DEFAULT_MAX_POINTS) -> Series:
    """One metric of ``run``, downsampled to at most ``max_points``
    (campaigns/domain/downsampling.py)."""
    row = MetricSummary.objects.filter(run=run, name=name).first()
    if row is None:
        return Series(name=name, count=0, points=[])
    if row.count <= max_points and row.points_kept:
        points = _points_of_keys({row.pk: run.pk}, non_finite_only=False).get(run.pk, [])
        return Series(name=name, count=row.count, points=points)
    summary = as_summary(row)
    level = mr.level_for(summary, max_points)
    buckets = [
        mr.Bucket(*values)
        for values in MetricRollup.objects.filter(run=run, summary=row, level=level)
        .order_by("bucket")
        .values_list(*_BUCKET_FIELDS)
    ]
    nf = (
        _points_of_keys({row.pk: run.pk}, non_finite_only=True).get(run.pk, [])
        if row.non_finite < max_points and row.points_kept
        else None
    )
    points = mr.series_from_rollups(summary, buckets, nf, max_points)
    return Series(name=name, count=row.count, points=points)


_BUCKET_FIELDS = (
    "count",
    "min_step",
    "min_value",
    "max_step",
    "max_value",
    "non_finite",
    "first_nf_step",
    "first_nf",
    "last_nf_step",
    "last_nf",
)


def _rollups_at_their_levels(
    summaries: dict[int, mr.Summary], max_points: int
) -> dict[int, list[mr.Bucket]]:
    """By summary id, the rollup buckets of the level each long series is drawn at (one query
    per level, whatever the number of series)."""
    levels: dict[int, list[int]] = {}
    for pk, summary in summaries.items():
        levels.setdefault(mr.level_for(summary, max_points), []).append(pk)
    buckets: dict[int, list[mr.Bucket]] = {}
    for level, pks in levels.items():
        for summary_id, *values in (
            MetricRollup.objects.filter(summary_id__in=pks, level=level)
            .order_by("summary_id", "bucket")
            .values_list("summary_id", *_BUCKET_FIELDS)
        ):
            buckets.setdefault(summary_id, []).append(mr.Bucket(*values))
    return buckets


def as_summary(row: MetricSummary) -> mr.Summary:
    """The stored summary as the pure rule takes it (the token carries a non-finite last)."""
    last = mr.value_of(row.last_token) if row.last_token else float(row.last_value or 0.0)
    return mr.Summary(
        count=row.count,
        first_step=row.first_step,
        last_step=row.last_step,
        last_value=last,
        min_value=row.min_value,
        max_value=row.max_value,
        non_finite=row.non_finite,
    )


def campaign_metric_names(campaign_id: int) -> list[tuple[str, int]]:
    """The metric names logged by the campaign's runs with the number of runs logging each,
    most common first (ties by name): the compare page's choices, its default the first."""
    rows = (
        MetricSummary.objects.filter(run__campaign_id=campaign_id)
        .values_list("name")
        .annotate(runs=Count("run_id"))
        .order_by("-runs", "name")
    )
    return [(name, runs) for name, runs in rows]


def campaign_series(
    campaign_id: int, name: str, max_points: int = DEFAULT_MAX_POINTS
) -> dict[int, Series]:
    """One metric of every run of the campaign, by run pk, each at most ``max_points`` points
    (as ``metric_series``). A few queries whatever the number of runs: the summaries, the short
    series whole, the long ones' rollups by level and their non-finite points."""
    rows = list(MetricSummary.objects.filter(run__campaign_id=campaign_id, name=name))
    short = {r.pk: r.run_id for r in rows if r.count <= max_points and r.points_kept}
    long = [r for r in rows if r.pk not in short]
    found = {
        pk: Series(name=name, count=len(pts), points=pts)
        for pk, pts in _points_of_keys(short, non_finite_only=False).items()
    }
    if not long:
        return found
    nf = _points_of_keys(
        {r.pk: r.run_id for r in long if r.non_finite < max_points and r.points_kept},
        non_finite_only=True,
    )
    summaries = {r.pk: as_summary(r) for r in long}
    buckets = _rollups_at_their_levels(summaries, max_points)
    for r in long:
        kept = r.non_finite < max_points and r.points_kept
        non_finite = nf.get(r.run_id, []) if kept else None
        points = mr.series_from_rollups(
            summaries[r.pk], buckets.get(r.pk, []), non_finite, max_points
        )
        found[r.run_id] = Series(name=name, count=r.count, points=points)
    return found


def _points_of_keys(
    keys: dict[int, int], *, non_finite_only: bool
) -> dict[int, list[series.Point]]:
    """Every point (or only the non-finite ones) of the given metrics (key → its run's pk), by
    run pk, in step order: one query off the primary key (the run in it prunes partitions),
    both tiers of the store."""
    found = raw.points_of({}, keys) if non_finite_only else raw.points_of(keys)
    by_run: dict[int, list[series.Point]] = {}
    for p in found:
        by_run.setdefault(p.run_id, []).append((p.step, p.value))
    return by_run


def history_page(
    run: Run, name: str, *, limit: int, after: tuple[int, int] | None = None
) -> tuple[list[MetricPoint], tuple[int, int] | None]:
    """One page of a metric's raw points in (step, logging) order, off the primary key: at
    most ``limit`` points after the ``(step, seq)`` cursor ``after``, and the cursor of the
    next page (None on the last). A keyset page costs what it returns however deep it is
    (MLflow's get-history pages with ``max_results`` and ``page_token``), in either tier."""
    key = MetricSummary.objects.filter(run=run, name=name).first()
    if key is None:
        return [], None
    page = [_as_point(p, key) for p in raw.page(run.pk, key.pk, after=after, limit=limit + 1)]
    if len(page) <= limit:
        return page, None
    page = page[:limit]
    return page, (page[-1].step, page[-1].seq)


def _as_point(p: raw.Raw, key: MetricSummary) -> MetricPoint:
    """A stored point as the MLflow shapes take it (the name from its summary, no query)."""
    return MetricPoint(
        run_id=p.run_id,
        key=key,
        step=p.step,
        seq=p.seq,
        value=p.value,
        non_finite=p.token,
        created_at=p.created_at,
        timestamp_ms=p.timestamp_ms,
        model_id=p.model_id,
    )


def last_points(run_pks: Sequence[int]) -> dict[int, list[MetricPoint]]:
    """The last point of each metric of each run (largest step; of equal steps the
    later-logged), by run pk and name: two or three queries (the summaries say which point).
    A metric whose raw points the retention dropped gets its summary's last point, logged at
    its last logging time."""
    summaries = {s.pk: s for s in MetricSummary.objects.filter(run_id__in=run_pks)}
    if not summaries:
        return {}
    latest = raw.last_at(
        {k: (s.run_id, s.last_step) for k, s in summaries.items() if s.points_kept}
    )
    found: dict[int, list[MetricPoint]] = {}
    for summary in sorted(summaries.values(), key=lambda s: (s.run_id, s.name)):
        stored = latest.get(summary.pk)
        point = _as_point(stored, summary) if stored else _summary_point(summary)
        found.setdefault(summary.run_id, []).append(point)
    return found


def _summary_point(summary: MetricSummary) -> MetricPoint:
    return MetricPoint(
        run_id=summary.run_id,
        key=summary,
        step=summary.last_step,
        seq=summary.count - 1,
        value=summary.last_value,
        non_finite=summary.last_token,
        created_at=summary.last_at,
    )


def latest_points(run: Run, limit: int = 100) -> tuple[dict[str, tuple[int, float]], int]:
    """The last point of each of the run's first ``limit`` metrics by name (largest step; of
    equal steps the later-logged) and the run's total point count: from its summaries, one
    query however long the run."""
    rows = list(MetricSummary.objects.filter(run=run).order_by("name"))
    latest = {r.name: (r.last_step, as_summary(r).last_value) for r in rows[:limit]}
    return latest, sum(r.count for r in rows)


def threshold_rule(campaign_id: int, name: str) -> StopRule | None:
    """The campaign's first metric-threshold stop rule on ``name`` (the compare page's line)."""
    return (
        StopRule.objects.filter(
            campaign_id=campaign_id, kind=StopRuleKind.METRIC_THRESHOLD, metric=name
        )
        .order_by("id")
        .first()
    )


def run_series(
    run: Run, names: Sequence[str], max_points: int = DEFAULT_MAX_POINTS
) -> dict[str, Series]:
    """Several metrics of one run, by name, each as ``metric_series`` reads it: the run
    page's curves in a few queries whatever their number (the summaries, the short series
    whole and the long ones' non-finite points in one, the long ones' rollups by level). A
    metric whose raw points the retention dropped is drawn from its rollups, as there."""
    rows = list(MetricSummary.objects.filter(run=run, name__in=list(names)))
    long = [r for r in rows if r.count > max_points or not r.points_kept]
    whole = [r.pk for r in rows if r.count <= max_points and r.points_kept]
    non_finite_of = [r.pk for r in long if r.non_finite < max_points and r.points_kept]
    points = _points_of_summaries(run.pk, whole, non_finite_of)
    found = {
        r.name: Series(name=r.name, count=r.count, points=points.get(r.pk, []))
        for r in rows
        if r.pk in set(whole)
    }
    summaries = {r.pk: as_summary(r) for r in long}
    buckets = _rollups_at_their_levels(summaries, max_points)
    for r in long:
        nf = points.get(r.pk, []) if r.pk in set(non_finite_of) else None
        drawn = mr.series_from_rollups(summaries[r.pk], buckets.get(r.pk, []), nf, max_points)
        found[r.name] = Series(name=r.name, count=r.count, points=drawn)
    return found


def _points_of_summaries(
    run_pk: int, whole: Sequence[int], non_finite_of: Sequence[int]
) -> dict[int, list[series.Point]]:
    """Every point of the metrics (summary ids) ``whole`` and the non-finite points of
    ``non_finite_of`` (two disjoint sets) of one run, by summary id, in step order (equal
    steps in logging order, ``seq``): one query on the primary key's (run, key, step) prefix,
    both tiers of the store."""
    found = raw.points_of(dict.fromkeys(whole, run_pk), dict.fromkeys(non_finite_of, run_pk))
    by_key: dict[int, list[series.Point]] = {}
    for p in found:
        by_key.setdefault(p.key_id, []).append((p.step, p.value))
    return by_key


# GPU memory used as MLflow's system metrics and the client's NVML sampler name it (MB).
GPU_MEMORY = r"^system/gpu_[0-9]+_memory_usage_megabytes$"


def peak_gpu_memory_mb(runs: QuerySet[Run]) -> dict[int, float]:
    """By run, the highest memory any one of its GPUs used, in MB (10^6 bytes), from the
    summaries' finite extremes (never the points): one statement whatever the runs."""
    rows = (
        MetricSummary.objects.filter(run__in=runs, name__regex=GPU_MEMORY, max_value__isnull=False)
        .values("run_id")
        .annotate(peak=Max("max_value"))
        .values_list("run_id", "peak")
    )
    return {run: float(peak) for run, peak in rows}
