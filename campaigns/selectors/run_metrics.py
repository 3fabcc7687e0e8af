"""Reading a run's logged data back (docs/api.md: reading a run's metrics).

The reads the API and the run admin page share. Series come off the ``(run, name, step)``
index in step order as plain tuples (no model instances: a run can hold a million points), and
are thinned by the pure rule in campaigns/domain/downsampling.py.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.db import connection
from django.db.models import Count, Q, QuerySet

from campaigns.domain import downsampling as series
from campaigns.domain import item_fate as fates
from campaigns.models import (
    ItemStatus,
    MetricPoint,
    PlannedItem,
    Run,
    RunKind,
    StopRule,
    StopRuleKind,
)

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
    rows = (
        MetricPoint.objects.filter(run=run)
        .values_list("name")
        .annotate(count=Count("id"))
        .order_by("name")
    )
    return [(name, count) for name, count in rows]


def full_series(run: Run, name: str) -> list[series.Point]:
    """Every point of one metric in step order, non-finite values as floats."""
    opts = MetricPoint._meta
    q = connection.ops.quote_name
    sql = (
        f"SELECT {q('step')}, {q('value')}, {q('non_finite')} FROM {q(opts.db_table)} "
        f"WHERE {q('run_id')} = %s AND {q('name')} = %s ORDER BY {q('step')}"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [run.pk, name])
        rows = cursor.fetchall()
    nf = _NON_FINITE
    # SQLite keeps NULL for a non-finite value; the token column says which.
    return [(step, nf[tok] if tok else float(value)) for step, value, tok in rows]


def logged_at(run: Run, name: str, points: Sequence[series.Point]) -> list[tuple[int, Any]]:
    """(step, when it was logged) of the given points of one metric: one indexed query."""
    steps = [step for step, _value in points]
    when = dict(
        MetricPoint.objects.filter(run=run, name=name, step__in=steps)
        .order_by()
        .values_list("step", "created_at")
    )
    return [(step, when[step]) for step in steps]


def client_marks(
    run: Run, name: str, points: Sequence[series.Point]
) -> list[tuple[int | None, str]]:
    """(client timestamp in ms, logged model id) of the given points, as an MLflow client sent
    them ((None, "") for points logged without): one indexed query."""
    steps = [step for step, _value in points]
    marks = {
        step: (stamp, model_id)
        for step, stamp, model_id in MetricPoint.objects.filter(run=run, name=name, step__in=steps)
        .order_by("id")
        .values_list("step", "timestamp_ms", "model_id")
    }
    return [marks.get(step, (None, "")) for step in steps]


def metric_series(run: Run, name: str, max_points: int = DEFAULT_MAX_POINTS) -> Series:
    """One metric of ``run``, downsampled to at most ``max_points``
    (campaigns/domain/downsampling.py)."""
    points = full_series(run, name)
    return Series(name=name, count=len(points), points=series.downsample(points, max_points))


_RUN_STATUSES = ("running", "stopped", "completed", "failed")


def with_full_run_counts(items: QuerySet[PlannedItem]) -> QuerySet[PlannedItem]:
    """``items`` annotated with their full runs by status (``full_<status>``), for ``fate_of``."""
    return items.annotate(
        **{
            f"full_{s}": Count("runs", filter=Q(runs__kind=RunKind.FULL, runs__status=s))
            for s in _RUN_STATUSES
        }
    )


def fate_of(item: PlannedItem) -> fates.Fate:
    """The item's fate (campaigns/domain/item_fate.py), from annotations when present, else
    one query."""
    if hasattr(item, "full_completed"):
        counts = {s: getattr(item, f"full_{s}") for s in _RUN_STATUSES}
    else:
        counts = dict(
            Run.objects.filter(variant=item, kind=RunKind.FULL)
            .order_by()
            .values_list("status")
            .annotate(n=Count("id"))
        )
    return fates.item_fate(cut=item.status == ItemStatus.CUT, full_runs=counts)


def campaign_metric_names(campaign_id: int) -> list[tuple[str, int]]:
    """The metric names logged by the campaign's runs with the number of runs logging each,
    most common first (ties by name): the compare page's choices, its default the first."""
    rows = (
        MetricPoint.objects.filter(run__campaign_id=campaign_id)
        .values_list("name")
        .annotate(runs=Count("run_id", distinct=True))
        .order_by("-runs", "name")
    )
    return [(name, runs) for name, runs in rows]


def campaign_series(
    campaign_id: int, name: str, max_points: int = DEFAULT_MAX_POINTS
) -> dict[int, Series]:
    """One metric of every run of the campaign, by run pk, each downsampled to at most
    ``max_points`` (campaigns/domain/downsampling.py). One query for all runs, however many there
    are."""
    opts = MetricPoint._meta
    q = connection.ops.quote_name
    run_table = q(Run._meta.db_table)
    sql = (
        f"SELECT m.{q('run_id')}, m.{q('step')}, m.{q('value')}, m.{q('non_finite')} "
        f"FROM {q(opts.db_table)} m JOIN {run_table} r ON r.{q('id')} = m.{q('run_id')} "
        f"WHERE r.{q('campaign_id')} = %s AND m.{q('name')} = %s "
        f"ORDER BY m.{q('run_id')}, m.{q('step')}"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [campaign_id, name])
        rows = cursor.fetchall()
    by_run: dict[int, list[series.Point]] = {}
    nf = _NON_FINITE
    for run_pk, step, value, tok in rows:
        by_run.setdefault(run_pk, []).append((step, nf[tok] if tok else float(value)))
    return {
        pk: Series(name=name, count=len(pts), points=series.downsample(pts, max_points))
        for pk, pts in by_run.items()
    }


def threshold_rule(campaign_id: int, name: str) -> StopRule | None:
    """The campaign's first metric-threshold stop rule on ``name`` (the compare page's line)."""
    return (
        StopRule.objects.filter(
            campaign_id=campaign_id, kind=StopRuleKind.METRIC_THRESHOLD, metric=name
        )
        .order_by("id")
        .first()
    )
