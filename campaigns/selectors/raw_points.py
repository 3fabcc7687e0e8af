"""Raw metric points from both tiers of the store (docs/metric_store.md §3 "Two tiers").

The one place that reads points: the hot ``MetricPoint`` rows (everything on SQLite; on
PostgreSQL what ingest stored since the last packing) and the ``MetricBlock`` rows
(PostgreSQL: points packed ``BLOCK_POINTS`` (78) to a row by
campaigns/services/metric_packing.py), unnested.
Each function answers what the one-row-per-point table answered before packing, in the same
order: by run, metric, step, then ``seq`` (logging order). The blocks are picked off their
keys, never scanned: by the partial index of the blocks holding a non-finite point, by their
step ranges (``metric_block_steps``, an index-only scan) for points at given steps and for
keyset pages.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Mapping
from typing import Any, NamedTuple

from django.db import connection

_TOKENS = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}
_TABLE = "campaigns_metricpoint"
_BLOCKS = "campaigns_metricblock"
_SUMMARIES = "campaigns_metricsummary"


class Raw(NamedTuple):
    """One stored point. ``value`` is a float (NaN and ±Inf included) and ``token`` says in
    words which non-finite value it is ("" when finite); the last three are None/"" where a
    read asks only for the series."""

    run_id: int
    key_id: int
    step: int
    seq: int
    value: float
    token: str
    created_at: Any = None
    timestamp_ms: int | None = None
    model_id: str = ""


def _packs() -> bool:
    return connection.vendor == "postgresql"


def _token(value: float) -> str:
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    return ""


_HOT_SERIES = "run_id, key_id, step, seq, value, non_finite"
_HOT_FULL = _HOT_SERIES + ", created_at, timestamp_ms, model_id"
_COLD_SERIES = (
    "b.run_id, b.key_id, u.step, coalesce(u.seq, b.seq0 + CAST(u.ord AS integer) - 1), u.value, ''"
)
_COLD_FULL = _COLD_SERIES + ", u.created, u.stamp, coalesce(u.model, '')"
_UNNEST_SERIES = 'unnest(b.seqs, b.steps, b."values") WITH ORDINALITY AS u(seq, step, value, ord)'
_UNNEST_FULL = (
    'unnest(b.seqs, b.steps, b."values", b.created, b.stamps, b.model_ids) '
    "WITH ORDINALITY AS u(seq, step, value, created, stamp, model, ord)"
)


def _union(hot_where: str, cold_where: str, *, full: bool, block: bool = False) -> str:
    """The rows of both tiers matching the conditions (``b.`` and ``u.`` name the block and
    its unnested point), unordered; ``block``: each led by its block's number (NULL: hot)."""
    lead_hot, lead_cold = ("CAST(NULL AS integer), ", "b.block, ") if block else ("", "")
    hot = f"SELECT {lead_hot}{_HOT_FULL if full else _HOT_SERIES} FROM {_TABLE} WHERE {hot_where}"
    if not _packs():
        return hot
    cold = (
        f"SELECT {lead_cold}{_COLD_FULL if full else _COLD_SERIES} FROM {_BLOCKS} b "
        f"CROSS JOIN LATERAL {_UNNEST_FULL if full else _UNNEST_SERIES} WHERE {cold_where}"
    )
    return f"{hot} UNION ALL {cold}"


def _both(hot_where: str, cold_where: str, params: dict[str, Any], *, full: bool) -> list[Raw]:
    """Rows of both tiers matching the conditions, ordered by run, key, step, seq."""
    sql = f"SELECT * FROM ({_union(hot_where, cold_where, full=full)}) p ORDER BY 1, 2, 3, 4"
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return [_raw(row) for row in cursor.fetchall()]


def _raw(row: tuple[Any, ...]) -> Raw:
    run_id, key_id, step, seq, value, token, *rest = row
    if token:  # a hot row: the token is the truth (SQLite keeps NaN as NULL)
        value = _TOKENS[token]
    elif value is None:
        value = math.nan
    else:
        value = float(value)
        token = _token(value)
    return Raw(run_id, key_id, step, seq, value, token, *rest)


def _in(name: str, values: Iterable[int], params: dict[str, Any]) -> str:
    """``= ANY`` on PostgreSQL (one parameter), ``IN (…)`` on SQLite."""
    values = sorted(set(values))
    if connection.vendor == "postgresql":
        params[name] = values
        return f"= ANY(%({name})s)"
    for i, v in enumerate(values):
        params[f"{name}{i}"] = v
    return "IN (" + ", ".join(f"%({name}{i})s" for i in range(len(values))) + ")"


def points_of(whole: Mapping[int, int], non_finite: Mapping[int, int] | None = None) -> list[Raw]:
    """Every point of the metrics ``whole`` and the non-finite points of the metrics
    ``non_finite`` (each key → its run's pk; two disjoint sets), ordered: the short series
    whole and the long ones' non-finite points, in one query."""
    non_finite = non_finite or {}
    if not whole and not non_finite:
        return []
    params: dict[str, Any] = {}
    runs = _in("runs", [*whole.values(), *non_finite.values()], params)
    hot, cold = [], []
    if whole:
        keys = _in("whole", whole, params)
        hot.append(f"key_id {keys}")
        cold.append(f"b.key_id {keys}")
    if non_finite:
        keys = _in("nf", non_finite, params)
        hot.append(f"(key_id {keys} AND non_finite <> '')")
        cold.append(
            f"(b.key_id {keys} AND b.non_finite > 0 "
            "AND u.value IN ('NaN', 'Infinity', '-Infinity'))"
        )
    return _both(
        f"run_id {runs} AND ({' OR '.join(hot)})",
        f"b.run_id {runs} AND ({' OR '.join(cold)})",
        params,
        full=False,
    )


def points_at(run_pk: int, key: int, steps: Collection[int]) -> list[Raw]:
    """Every point of one metric at the given steps, ordered, with its logging time and what
    the client sent (the marks and costs of the points a series shows): one query. The
    blocks are those whose step range holds one of the steps, found off the step ranges'
    index alone (``width_bucket`` bisects the sorted steps), then read by their key."""
    if not steps:
        return []
    params: dict[str, Any] = {"run": run_pk, "key": key}
    return _both(*_at("= %(key)s", steps, params), params, full=True)


class Stored(NamedTuple):
    """A stored point with its metric's name, and where it lies: the number of the block
    holding it, None for a hot row (what a write to the point needs, run_log's links)."""

    name: str
    block: int | None
    point: Raw


def points_named_at(run_pk: int, names: Collection[str], steps: Collection[int]) -> list[Stored]:
    """Every point of the run's metrics ``names`` at any of the given steps, ordered as
    ``points_at`` (MLflow's recognition of a point already stored,
    campaigns/services/run_log.py): one query whatever the number of names and steps, the
    names looked up in the run's summaries (their ids are the keys) in the same statement."""
    if not names or not steps:
        return []
    params: dict[str, Any] = {"run": run_pk}
    wanted = sorted(set(names))
    if _packs():
        params["names"] = wanted
        named = "name = ANY(%(names)s)"
        # An array of the keys (an InitPlan), not a join the planner may hash: each tier is
        # then read off its (run, key, …) index as points_at reads it.
        keys = "= ANY(ARRAY(SELECT id FROM k))"
    else:
        params |= {f"name{i}": n for i, n in enumerate(wanted)}
        named = f"name IN ({', '.join(f'%(name{i})s' for i in range(len(wanted)))})"
        keys = "IN (SELECT id FROM k)"
    union = _union(*_at(keys, steps, params), full=True, block=True)
    sql = (
        f"WITH k AS (SELECT id, name FROM {_SUMMARIES} WHERE run_id = %(run)s AND {named}) "
        f"SELECT k.name, p.* FROM ({union}) p JOIN k ON k.id = p.key_id ORDER BY 3, 4, 5, 6"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return [Stored(row[0], row[1], _raw(row[2:])) for row in cursor.fetchall()]


def _at(keys: str, steps: Collection[int], params: dict[str, Any]) -> tuple[str, str]:
    """The conditions of each tier for the points of the metrics whose key satisfies
    ``key_id {keys}`` at the given steps."""
    wanted = sorted(set(steps))
    at = _in("steps", wanted, params)
    hot = f"run_id = %(run)s AND key_id {keys} AND step {at}"
    cold = (
        f"b.run_id = %(run)s AND b.key_id {keys} AND b.block = ANY(ARRAY("
        f"SELECT h.block FROM {_BLOCKS} h WHERE h.run_id = %(run)s AND h.key_id {keys} "
        "AND h.max_step >= %(low)s AND h.min_step <= %(high)s "
        "AND width_bucket(h.max_step, %(sorted)s::bigint[]) "
        "> width_bucket(h.min_step - 1, %(sorted)s::bigint[]))) "
        # Typed as the column: PostgreSQL then hashes the array, not a scan of it a point.
        "AND u.step = ANY(%(sorted)s::bigint[])"
    )
    if _packs():  # SQLite takes no array parameter (and has no blocks)
        params |= {"sorted": wanted, "low": wanted[0], "high": wanted[-1]}
    return hot, cold


def page(run_pk: int, key: int, *, after: tuple[int, int] | None, limit: int) -> list[Raw]:
    """The first ``limit`` points of one metric after the ``(step, seq)`` cursor, ordered,
    with their times and model ids: a keyset page. The hot rows come off the primary key;
    the blocks by their smallest step, a few at a time, until the ``limit``-th point found
    lies before the next block's smallest step (no later block can hold an earlier point).
    A page costs what it returns however deep it is."""
    step, seq = after if after is not None else (-(2**63), -1)
    params: dict[str, Any] = {"run": run_pk, "key": key, "step": step, "seq": seq}
    hot = (
        f"SELECT {_HOT_FULL} FROM {_TABLE} WHERE run_id = %(run)s AND key_id = %(key)s "
        # step >= s bounds the index range scan; the OR only filters the boundary step.
        "AND step >= %(step)s AND (step > %(step)s OR seq > %(seq)s) "
        "ORDER BY step, seq LIMIT %(limit)s"
    )
    with connection.cursor() as cursor:
        cursor.execute(hot, {**params, "limit": limit})
        found = [_raw(row) for row in cursor.fetchall()]
    if _packs():
        found += _page_of_blocks(params, limit)
    found.sort(key=lambda p: (p.step, p.seq))
    return found[:limit]


def _page_of_blocks(params: dict[str, Any], limit: int) -> list[Raw]:
    found: list[Raw] = []
    position = (-(2**63), -1)  # (min_step, block) of the last block read
    take = limit // 64 + 2  # blocks hold 78 points or fewer: a page of them and a spare
    while True:
        with connection.cursor() as cursor:
            cursor.execute(
                f"SELECT min_step, block FROM {_BLOCKS} WHERE run_id = %(run)s "
                "AND key_id = %(key)s AND max_step >= %(step)s "
                "AND (min_step, block) > (%(low)s, %(block)s) ORDER BY min_step, block "
                "LIMIT %(take)s",
                {**params, "low": position[0], "block": position[1], "take": take + 1},
            )
            heads = cursor.fetchall()
        if not heads:
            return found
        blocks = [block for _low, block in heads[:take]]
        found += [
            p
            for p in _unpacked(params["run"], params["key"], blocks)
            if (p.step, p.seq) > (params["step"], params["seq"])
        ]
        found.sort(key=lambda p: (p.step, p.seq))
        del found[limit:]
        if len(heads) <= take:
            return found
        if len(found) >= limit and found[-1].step < heads[take][0]:
            return found
        position = heads[take - 1]
        take *= 2


def _unpacked(run_pk: int, key: int, blocks: list[int]) -> list[Raw]:
    params: dict[str, Any] = {"run": run_pk, "key": key, "blocks": blocks}
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT {_COLD_FULL} FROM {_BLOCKS} b CROSS JOIN LATERAL {_UNNEST_FULL} "
            "WHERE b.run_id = %(run)s AND b.key_id = %(key)s AND b.block = ANY(%(blocks)s)",
            params,
        )
        return [_raw(row) for row in cursor.fetchall()]


def last_at(steps: Mapping[int, tuple[int, int]]) -> dict[int, Raw]:
    """For each metric (key → (its run's pk, a step)), its latest-logged point at that step
    (the largest seq), with its times and model id; absent where none is stored. The hot
    rows are the newer ones; a metric without one there reads the last block holding the
    step (its blocks backwards off the primary key: the last one in a forward-moving log)."""
    if not steps:
        return {}
    params: dict[str, Any] = {}
    runs = _in("runs", {r for r, _s in steps.values()}, params)
    at = _in("steps", {s for _r, s in steps.values()}, params)
    hot = f"run_id {runs} AND key_id {_in('keys', steps, params)} AND step {at}"
    found: dict[int, Raw] = {}
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {_HOT_FULL} FROM {_TABLE} WHERE {hot} ORDER BY seq", params)
        for row in cursor.fetchall():
            point = _raw(row)
            if steps[point.key_id][1] == point.step:
                found[point.key_id] = point
    missing = [k for k in steps if k not in found]
    if missing and _packs():
        found |= _last_in_blocks({k: steps[k] for k in missing})
    return found


_LAST_IN_BLOCKS = f"""
SELECT {_COLD_FULL}
FROM unnest(%(runs)s::bigint[], %(keys)s::bigint[], %(steps)s::bigint[]) AS w(run, key, step)
CROSS JOIN LATERAL (
    SELECT * FROM {_BLOCKS} x WHERE x.run_id = w.run AND x.key_id = w.key
    AND x.max_step >= w.step AND x.min_step <= w.step ORDER BY x.block DESC LIMIT 1
) b
CROSS JOIN LATERAL {_UNNEST_FULL}
WHERE u.step = w.step
ORDER BY 4
"""


def _last_in_blocks(steps: Mapping[int, tuple[int, int]]) -> dict[int, Raw]:
    keys = list(steps)
    params = {
        "runs": [steps[k][0] for k in keys],
        "keys": keys,
        "steps": [steps[k][1] for k in keys],
    }
    found: dict[int, Raw] = {}
    with connection.cursor() as cursor:
        cursor.execute(_LAST_IN_BLOCKS, params)
        for row in cursor.fetchall():
            point = _raw(row)
            found[point.key_id] = point
    return found


def runs_with_hot_points(*, older_than: Any) -> list[int]:
    """The runs holding hot points logged before ``older_than`` (what the beat packs; none
    on SQLite, which does not pack). A scan of the hot tier alone: the points of the last
    packing interval."""
    if not _packs():
        return []
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT DISTINCT run_id FROM {_TABLE} WHERE created_at < %s ORDER BY run_id",
            [older_than],
        )
        return [run_pk for (run_pk,) in cursor.fetchall()]


def busiest_since(runs: Collection[int], keys: Collection[int], since: Any) -> dict[int, float]:
    """By run, the largest finite value logged at or after ``since`` among the metrics ``keys``
    (summary ids) of ``runs``, from both tiers: the idle-GPU condition's read (docs/domain.md
    §19). Runs with no such point are absent."""
    if not runs or not keys:
        return {}
    params: dict[str, Any] = {"since": since}
    where = f"run_id {_in('runs', runs, params)} AND key_id {_in('keys', keys, params)}"
    hot = f"{where} AND created_at >= %(since)s AND non_finite = '' AND value IS NOT NULL"
    # NaN sorts above every number in PostgreSQL, so "< Infinity" leaves out NaN and +Inf.
    cold = (
        f"b.{where.replace('AND key_id', 'AND b.key_id')} AND u.created >= %(since)s "
        "AND u.value < 'Infinity'::float8 AND u.value > '-Infinity'::float8"
    )
    sql = f"SELECT run_id, max(value) FROM ({_union(hot, cold, full=True)}) p GROUP BY run_id"
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return {run: float(value) for run, value in cursor.fetchall()}
