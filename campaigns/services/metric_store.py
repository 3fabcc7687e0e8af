"""Keeping a run's metric summaries and rollups up to date with its points
(docs/architecture.md, "Metric store").

Called by campaigns/services/ingest.py in the ingest transaction, after the run row is locked,
so two batches of one run are folded one after the other. Each batch costs two statements
whatever its size: one ``INSERT … ON CONFLICT DO UPDATE`` of the summaries of its metrics and
one of its rollups, from the batch's aggregates computed in Python
(campaigns/domain/metric_rollups.py); the ``DO UPDATE`` applies ``merge`` in SQL. SQLite
(3.35+: RETURNING) runs them apart; PostgreSQL runs both as one statement (the summaries in a
data-modifying ``WITH``) when the rollup rows fit one chunk, so a logging call pays one round
trip for its metric store.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

from django.db import connection

from campaigns.domain import downsampling
from campaigns.domain import metric_rollups as mr
from campaigns.models import MetricRollup, MetricSummary

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
        f"RETURNING {_q('id')}, {_q('name')}"
    )


def _rollup_sql(rows: int) -> str:
    t = _q(MetricRollup._meta.db_table)
    cols = (
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
    values = ", ".join(["(" + ", ".join(["%s"] * len(cols)) + ")"] * rows)

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
    sets = {
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
    assignments = ", ".join(f"{_q(c)} = {expr}" for c, expr in sets.items())
    key = ", ".join(_q(c) for c in ("run_id", "summary_id", "level", "bucket"))
    return (
        f"INSERT INTO {t} ({', '.join(_q(c) for c in cols)}) VALUES {values} "
        f"ON CONFLICT ({key}) DO UPDATE SET {assignments}"
    )


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


# The rollup columns as the combined statement's VALUES list carries them (the metric's name in
# place of its summary id, which the summary upsert returns), with their PostgreSQL types.
_ROLLUP_VALUES = (
    ("run_id", "bigint"),
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


def _combined_sql(summaries: int, rollups: int) -> str:
    """PostgreSQL: both upserts in one statement (one round trip), the summaries in a
    data-modifying WITH whose RETURNING gives the rollups their summary ids."""
    rollup = _rollup_sql(1)
    head = rollup[: rollup.index(" VALUES ")]
    conflict = rollup[rollup.index(" ON CONFLICT ") :]
    row = "(" + ", ".join(f"%s::{kind}" for _c, kind in _ROLLUP_VALUES) + ")"
    names = ", ".join(_q(c) for c, _k in _ROLLUP_VALUES)
    picked = ", ".join("s." + _q("id") if c == "name" else "v." + _q(c) for c, _k in _ROLLUP_VALUES)
    return (
        f"WITH s AS ({_summary_sql(summaries)}) {head} SELECT {picked} "
        f"FROM (VALUES {', '.join([row] * rollups)}) AS v ({names}) "
        f"JOIN s ON s.{_q('name')} = v.{_q('name')}{conflict}"
    )


def _rollup_rows(grouped: dict[str, list[mr.Point]], run_pk: int) -> list[list[Any]]:
    """The batch's rollup rows, each with its metric's name where its summary id goes."""
    rows: list[list[Any]] = []
    for name, pts in grouped.items():
        for (level, bucket), b in mr.rollup(pts).items():
            rows.append(
                [
                    run_pk,
                    name,
                    level,
                    bucket,
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
            )
    return rows


def record_points(run_pk: int, points: Sequence[tuple[str, int, float]], now: datetime) -> None:
    """Fold a stored batch ``(name, step, value)`` (logging order) into the run's summaries
    and rollups: one statement on PostgreSQL for a batch of up to _CHUNK rollup rows (a
    logging call's common case), else two or more."""
    grouped = _by_name(points)
    if not grouped:
        return
    params: list[Any] = []
    stamp = connection.ops.adapt_datetimefield_value(now)
    for name, pts in grouped.items():
        summary = mr.summarize(pts)
        assert summary is not None
        params += _summary_params(run_pk, name, summary, stamp)
    rows = _rollup_rows(grouped, run_pk)
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql" and len(rows) <= _CHUNK:
            flat = [v for row in rows for v in row]
            cursor.execute(_combined_sql(len(grouped), len(rows)), params + flat)
            return
        cursor.execute(_summary_sql(len(grouped)), params)
        ids = {name: pk for pk, name in cursor.fetchall()}
        for row in rows:
            row[1] = ids[row[1]]
        for start in range(0, len(rows), _CHUNK):
            chunk = rows[start : start + _CHUNK]
            cursor.execute(_rollup_sql(len(chunk)), [v for row in chunk for v in row])
