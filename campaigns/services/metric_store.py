"""Keeping a run's metric summaries and rollups up to date with its points
(docs/metric_store.md §1).

Called by campaigns/services/ingest.py in the ingest transaction, after the run row is locked,
so two batches of one run are folded one after the other. Each batch costs two upserts
whatever its size: one ``INSERT … ON CONFLICT DO UPDATE`` of the summaries of its metrics and
one of its rollups, from the batch's aggregates computed in Python
(campaigns/domain/metric_rollups.py); the ``DO UPDATE`` applies ``merge`` in SQL. SQLite
(3.35+: RETURNING) runs them apart; PostgreSQL runs both as one statement whatever the batch
(the summaries' in a data-modifying ``WITH``), each column bound as one array that the server
unnests, so the statement's text never changes: one round trip per batch.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta
from typing import Any

from django.core.exceptions import ValidationError
from django.db import connection, transaction

from campaigns.domain import downsampling
from campaigns.domain import metric_rollups as mr
from campaigns.models import (
    MetricBlock,
    MetricPoint,
    MetricRollup,
    MetricSummary,
    RunStatus,
    Team,
)

# Rows per rollup statement (14 parameters each: well inside SQLite's 32,766).
_CHUNK = 1000


def _q(name: str) -> str:
    return connection.ops.quote_name(name)


def _by_name(points: Iterable[tuple[str, int, float]]) -> dict[str, list[mr.Point]]:
    grouped: dict[str, list[mr.Point]] = {}
    for name, step, value in points:
        grouped.setdefault(name, []).append((step, value))
    return grouped


def _keep(a: str, b: str, better: str) -> str:
    """SQL: column ``a`` (the new row's) when ``better`` holds, else ``b`` (the stored one)."""
    return f"CASE WHEN {better} THEN {a} ELSE {b} END"


def _summary_sql(rows: int) -> str:
    t = _q(MetricSummary._meta.db_table)
    cols = (
        "run_id",
        "name",
        "count",
        "first_step",
        "last_step",
        "last_value",
        "last_token",
        "min_value",
        "max_value",
        "non_finite",
        "first_at",
        "last_at",
    )
    values = ", ".join(["(" + ", ".join(["%s"] * len(cols)) + ")"] * rows)

    def o(c: str) -> str:
        return f"{t}.{_q(c)}"

    def n(c: str) -> str:
        return f"excluded.{_q(c)}"

    later = f"{n('last_step')} >= {o('last_step')}"
    sets = {
        "count": f"{o('count')} + {n('count')}",
        "first_step": _keep(
            n("first_step"), o("first_step"), f"{n('first_step')} < {o('first_step')}"
        ),
        "last_step": _keep(n("last_step"), o("last_step"), later),
        "last_value": _keep(n("last_value"), o("last_value"), later),
        "last_token": _keep(n("last_token"), o("last_token"), later),
        "min_value": _keep(
            n("min_value"),
            o("min_value"),
            f"{o('min_value')} IS NULL OR {n('min_value')} < {o('min_value')}",
        ),
        "max_value": _keep(
            n("max_value"),
            o("max_value"),
            f"{o('max_value')} IS NULL OR {n('max_value')} > {o('max_value')}",
        ),
        "non_finite": f"{o('non_finite')} + {n('non_finite')}",
        "last_at": _keep(n("last_at"), o("last_at"), f"{n('last_at')} > {o('last_at')}"),
    }
    assignments = ", ".join(f"{_q(c)} = {expr}" for c, expr in sets.items())
    return (
        f"INSERT INTO {t} ({', '.join(_q(c) for c in cols)}) VALUES {values} "
        f"ON CONFLICT ({_q('run_id')}, {_q('name')}) DO UPDATE SET {assignments} "
        f"RETURNING {_q('id')}, {_q('name')}, {_q('count')}"
    )


# The rollup row's columns, in the order _rollup_sql's VALUES rows carry them.
_ROLLUP_COLS = (
    "run_id",
    "summary_id",
    "level",
    "bucket",
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


def _rollup_sql(rows: int) -> str:
    t = _q(MetricRollup._meta.db_table)
    values = ", ".join(["(" + ", ".join(["%s"] * len(_ROLLUP_COLS)) + ")"] * rows)
    assignments = ", ".join(f"{_q(c)} = {expr}" for c, expr in _rollup_sets(t).items())
    key = ", ".join(_q(c) for c in ("run_id", "summary_id", "level", "bucket"))
    return (
        f"INSERT INTO {t} ({', '.join(_q(c) for c in _ROLLUP_COLS)}) VALUES {values} "
        f"ON CONFLICT ({key}) DO UPDATE SET {assignments}"
    )


def _rollup_sets(t: str) -> dict[str, str]:
    """The rollup upsert's SET expressions by column: counts add up, extremes keep the winner."""

    def o(c: str) -> str:
        return f"{t}.{_q(c)}"

    def n(c: str) -> str:
        return f"excluded.{_q(c)}"

    # The new extreme wins when it is better, or equal at a smaller step (merge's rule).
    lower = (
        f"{n('min_value')} IS NOT NULL AND ({o('min_value')} IS NULL OR {n('min_value')} < "
        f"{o('min_value')} OR ({n('min_value')} = {o('min_value')} AND "
        f"{n('min_step')} < {o('min_step')}))"
    )
    upper = (
        f"{n('max_value')} IS NOT NULL AND ({o('max_value')} IS NULL OR {n('max_value')} > "
        f"{o('max_value')} OR ({n('max_value')} = {o('max_value')} AND "
        f"{n('max_step')} < {o('max_step')}))"
    )
    first = (
        f"{n('first_nf_step')} IS NOT NULL AND ({o('first_nf_step')} IS NULL OR "
        f"{n('first_nf_step')} < {o('first_nf_step')})"
    )
    last = (
        f"{n('last_nf_step')} IS NOT NULL AND ({o('last_nf_step')} IS NULL OR "
        f"{n('last_nf_step')} >= {o('last_nf_step')})"
    )
    return {
        "count": f"{o('count')} + {n('count')}",
        "min_step": _keep(n("min_step"), o("min_step"), lower),
        "min_value": _keep(n("min_value"), o("min_value"), lower),
        "max_step": _keep(n("max_step"), o("max_step"), upper),
        "max_value": _keep(n("max_value"), o("max_value"), upper),
        "non_finite": f"{o('non_finite')} + {n('non_finite')}",
        "first_nf_step": _keep(n("first_nf_step"), o("first_nf_step"), first),
        "first_nf": _keep(n("first_nf"), o("first_nf"), first),
        "last_nf_step": _keep(n("last_nf_step"), o("last_nf_step"), last),
        "last_nf": _keep(n("last_nf"), o("last_nf"), last),
    }


def _summary_params(run_pk: int, name: str, s: mr.Summary, now: Any) -> list[Any]:
    token = downsampling.token(s.last_value) or ""
    # SQLite cannot store NaN; the token carries it (as on the points).
    last_value = None if token else s.last_value
    return [
        run_pk,
        name,
        s.count,
        s.first_step,
        s.last_step,
        last_value,
        token,
        s.min_value,
        s.max_value,
        s.non_finite,
        now,
        now,
    ]


def record_points(
    run_pk: int, points: Sequence[tuple[str, int, float]], now: datetime
) -> dict[str, tuple[int, int]]:
    """Fold a batch ``(name, step, value)`` (logging order) into the run's summaries and
    rollups: one statement on PostgreSQL whatever the batch's size, two or more elsewhere.
    Returns, by name, the metric's key (its summary id) and the ``seq`` of the batch's first
    point of it (the points logged before): what the points are stored under
    (docs/metric_store.md §2)."""
    grouped = _by_name(points)
    if not grouped:
        return {}
    summaries: dict[str, mr.Summary] = {}
    for name, pts in grouped.items():
        summary = mr.summarize(pts)
        assert summary is not None
        summaries[name] = summary
    # Each rollup row carries its metric's name where the summary id goes, until it is known.
    rows = [
        [run_pk, name, level, bucket, *_bucket_values(b)]
        for name, pts in grouped.items()
        for (level, bucket), b in mr.rollup(pts).items()
    ]
    if connection.vendor == "postgresql":
        return _record_postgresql(run_pk, grouped, summaries, rows, now)
    stamp = connection.ops.adapt_datetimefield_value(now)
    params: list[Any] = []
    for name, summary in summaries.items():
        params += _summary_params(run_pk, name, summary, stamp)
    with connection.cursor() as cursor:
        cursor.execute(_summary_sql(len(grouped)), params)
        keys = _keys(cursor.fetchall(), grouped)
        for row in rows:
            row[1] = keys[row[1]][0]
        for start in range(0, len(rows), _CHUNK):
            chunk = rows[start : start + _CHUNK]
            cursor.execute(_rollup_sql(len(chunk)), [v for row in chunk for v in row])
    return keys


def _keys(
    returned: Sequence[tuple[int, str, int]], grouped: dict[str, list[mr.Point]]
) -> dict[str, tuple[int, int]]:
    """By name: the summary id and the seq of the batch's first point (the count before)."""
    return {name: (pk, count - len(grouped[name])) for pk, name, count in returned}


# --- PostgreSQL: one statement of arrays -----------------------------------------------------
#
# Both upserts in one statement, the summaries' in a data-modifying WITH whose RETURNING gives
# the rollups their summary ids and the caller the points' keys. Each column travels as ONE
# array literal unnested by the server, so the statement's text is the same for every batch:
# a few dozen parameters instead of 14 a rollup row. A VALUES list of ~800 placeholders cost
# more to bind (client side), parse and plan than the upserts cost to run (issue 21's ingest
# ratio; docs/metric_store.md §5, "Ingest cost").

# The summary columns after run_id, as unnested (name first), with their PostgreSQL types.
_SUMMARY_ARRAYS = (
    ("name", "text"),
    ("count", "bigint"),
    ("first_step", "bigint"),
    ("last_step", "bigint"),
    ("last_value", "double precision"),
    ("last_token", "text"),
    ("min_value", "double precision"),
    ("max_value", "double precision"),
    ("non_finite", "bigint"),
)
# The rollup columns after run_id: the metric's name in place of its summary id (joined to the
# summaries' RETURNING), then the bucket's fields in Bucket's order.
_ROLLUP_ARRAYS = (
    ("name", "text"),
    ("level", "integer"),
    ("bucket", "bigint"),
    ("count", "bigint"),
    ("min_step", "bigint"),
    ("min_value", "double precision"),
    ("max_step", "bigint"),
    ("max_value", "double precision"),
    ("non_finite", "bigint"),
    ("first_nf_step", "bigint"),
    ("first_nf", "text"),
    ("last_nf_step", "bigint"),
    ("last_nf", "text"),
)
_TEXT_COLUMNS = frozenset(
    i for i, (_c, kind) in enumerate(_ROLLUP_ARRAYS, start=1) if kind == "text"
)
_SUMMARY_TEXT = frozenset(i for i, (_c, kind) in enumerate(_SUMMARY_ARRAYS) if kind == "text")


def _record_postgresql(
    run_pk: int,
    grouped: dict[str, list[mr.Point]],
    summaries: dict[str, mr.Summary],
    rows: list[list[Any]],
    now: datetime,
) -> dict[str, tuple[int, int]]:
    summary_rows = [_summary_params(run_pk, n, s, now)[1:10] for n, s in summaries.items()]
    params: list[Any] = [run_pk, now, now]
    params += [
        array_literal((r[i] for r in summary_rows), text=i in _SUMMARY_TEXT)
        for i in range(len(_SUMMARY_ARRAYS))
    ]
    params.append(run_pk)
    params += [
        array_literal((r[i] for r in rows), text=i in _TEXT_COLUMNS)
        for i in range(1, len(_ROLLUP_ARRAYS) + 1)
    ]
    with connection.cursor() as cursor:
        cursor.execute(_combined_sql(), params)
        return _keys(cursor.fetchall(), grouped)


def array_literal(values: Iterable[Any], *, text: bool = False) -> str:
    """A PostgreSQL array literal (``{1,NULL,2.5}``, ``{"a","b \\"c\\""}``) of ints, floats or
    (``text``) strings; None is NULL. Floats print as ``repr`` (the shortest text that reads
    back as the same double; ``nan`` and ``inf`` read as NaN and Infinity). Strings are
    double-quoted with backslash and quote escaped, so any name survives (array_in's rule)."""
    if text:
        return (
            "{"
            + ",".join(
                "NULL" if v is None else '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
                for v in values
            )
            + "}"
        )
    return "{" + ",".join("NULL" if v is None else repr(v) for v in values) + "}"


_COMBINED: list[str] = []


def _combined_sql() -> str:
    """The one statement (built once per process: its text does not depend on the batch)."""
    if _COMBINED:
        return _COMBINED[0]
    summary = _summary_sql(1)
    rollup = _rollup_sql(1)
    s_cols = ", ".join(_q(c) for c, _k in _SUMMARY_ARRAYS)
    s_arrays = ", ".join(f"%s::{kind}[]" for _c, kind in _SUMMARY_ARRAYS)
    r_cols = ", ".join(_q(c) for c, _k in _ROLLUP_ARRAYS)
    r_arrays = ", ".join(f"%s::{kind}[]" for _c, kind in _ROLLUP_ARRAYS)
    picked = ", ".join("s." + _q("id") if c == "name" else "v." + _q(c) for c, _k in _ROLLUP_ARRAYS)
    sql = (
        f"WITH s AS ({summary[: summary.index(' VALUES ')]} "
        f"SELECT %s::bigint, u.*, %s::timestamptz, %s::timestamptz "
        f"FROM unnest({s_arrays}) AS u ({s_cols}){summary[summary.index(' ON CONFLICT ') :]}), "
        f"r AS ({rollup[: rollup.index(' VALUES ')]} SELECT %s::bigint, {picked} "
        f"FROM unnest({r_arrays}) AS v ({r_cols}) "
        f"JOIN s ON s.{_q('name')} = v.{_q('name')}{rollup[rollup.index(' ON CONFLICT ') :]}) "
        f"SELECT {_q('id')}, {_q('name')}, {_q('count')} FROM s"
    )
    _COMBINED.append(sql)
    return sql


def _bucket_values(b: mr.Bucket) -> list[Any]:
    return [
        b.count,
        b.min_step,
        b.min_value,
        b.max_step,
        b.max_value,
        b.non_finite,
        b.first_nf_step,
        b.first_nf,
        b.last_nf_step,
        b.last_nf,
    ]


# --- Retention (docs/domain.md §27) ----------------------------------------------------------

# Metrics whose raw points one call drops: a bounded transaction (a long run's metric is one).
RETENTION_BATCH = 50


@transaction.atomic
def set_metric_retention(*, team: Team, days: int | None) -> Team:
    """The team's retention of raw metric points, in days (None: kept forever)."""
    if days is not None and (type(days) is not int or days < 1):
        raise ValidationError({"metric_retention_days": "a whole number of days, at least 1"})
    team.metric_retention_days = days
    team.save(update_fields=["metric_retention_days"])
    return team


@transaction.atomic
def drop_old_points(*, team_id: int, now: datetime, batch: int = RETENTION_BATCH) -> int:
    """Delete the raw points of up to ``batch`` of the team's metrics last logged more than its
    retention ago, in runs no longer running; their summaries and rollups stay (the curves are
    drawn from them from then on). Returns the points deleted; 0 when nothing is left, so a
    caller repeats it until then. Idempotent: a metric once dropped is not looked at again."""
    days = Team.objects.filter(pk=team_id).values_list("metric_retention_days", flat=True)
    if not days or days[0] is None:
        return 0
    old = list(
        MetricSummary.objects.filter(
            run__team_id=team_id,
            points_kept=True,
            last_at__lt=now - timedelta(days=days[0]),
        )
        .exclude(run__status=RunStatus.RUNNING)
        .order_by("last_at", "pk")
        .values_list("pk", "run_id")[:batch]
    )
    if not old:
        return 0
    # The run ids with the keys: the delete reads only the runs' partitions.
    # Both tiers (docs/metric_store.md §3 "Two tiers"): the hot rows and the packed blocks.
    runs, keys = {run for _key, run in old}, [key for key, _run in old]
    deleted, _ = MetricPoint.objects.filter(run_id__in=runs, key_id__in=keys).delete()
    packed = MetricBlock.objects.filter(run_id__in=runs, key_id__in=keys)
    deleted += sum(packed.values_list("count", flat=True))
    packed.delete()
    MetricSummary.objects.filter(pk__in=[key for key, _run in old]).update(points_kept=False)
    return max(deleted, 1)  # a metric with no raw point left still counts as work done
