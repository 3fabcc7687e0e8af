"""Packing a run's hot points into blocks (docs/metric_store.md §3 "Two tiers").

Ingest writes one ``MetricPoint`` row per point (COPY, the fast path); a row costs ~130 bytes
with its primary-key entry on PostgreSQL. ``pack_points`` moves them into ``MetricBlock`` rows
of ``BLOCK_POINTS`` consecutive points of a metric (``block = seq // BLOCK_POINTS``), their
fields as arrays in ``seq`` order: ~25 bytes a point. Set-based, one statement: the hot rows
are deleted and returned, merged with the points of the blocks they fall in (a partial block
packed before gets its later points), grouped by block and upserted. Only PostgreSQL packs
(SQLite, the embedded default, keeps the one plain table); readers see both tiers through
``campaigns/selectors/raw_points.py``. ``link_models`` sets the model id of stored points in
either tier (MLflow's log_model re-sending a run's points with its model's id).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, NamedTuple

from django.db import connection, transaction

from campaigns.models import MetricPoint, Run

# 78 points of 8-byte step, value and logging time make a 2,024-byte row: the largest that
# stays inline under PostgreSQL's 2,032-byte TOAST threshold, four to a page, so a read
# decompresses nothing (27 bytes a point; 64 leave a page a sixth empty: 33; 1,024-point
# blocks compress to 11 on the bench's data but make every look-up by step decompress a
# 1,024-point block: bench/README.md "Scale").
BLOCK_POINTS = 78

_MAX_SEQ = 2**31 - 1

# The hot rows to move: per metric, the points logged before ``horizon`` up to the first
# one logged after it (a seq prefix, so whatever stays hot comes after what is packed; the
# run row is locked, so no batch of this run is being stored meanwhile).
_CUT = """
    SELECT key_id, min(seq) AS seq FROM campaigns_metricpoint
    WHERE run_id = %(run)s AND created_at >= %(horizon)s GROUP BY key_id
"""
# Without a horizon nothing is cut: no scan for it.
_NO_CUT = "SELECT CAST(NULL AS bigint) AS key_id, CAST(NULL AS integer) AS seq WHERE FALSE"

_PACK = f"""
WITH cut AS ({{cut}}), keys AS (
    SELECT s.id AS key_id, coalesce(c.seq, {_MAX_SEQ}) AS cut
    FROM campaigns_metricsummary s LEFT JOIN cut c ON c.key_id = s.id
    WHERE s.run_id = %(run)s
), moved AS (
    DELETE FROM campaigns_metricpoint h USING keys k
    WHERE h.run_id = %(run)s AND h.key_id = k.key_id AND h.seq < k.cut
    RETURNING h.run_id, h.key_id, h.step, h.seq,
        CASE WHEN h.non_finite <> '' THEN CAST(h.non_finite AS double precision)
             ELSE h.value END AS value,
        h.created_at, h.timestamp_ms, h.model_id
), touched AS (
    SELECT DISTINCT key_id, seq / %(size)s AS block FROM moved
), packed AS (
    SELECT b.run_id, b.key_id, u.step, coalesce(u.seq, b.seq0 + CAST(u.ord AS integer) - 1),
        u.value, u.created, u.stamp, coalesce(u.model, '')
    FROM campaigns_metricblock b JOIN touched t ON t.key_id = b.key_id AND t.block = b.block
    CROSS JOIN LATERAL unnest(b.seqs, b.steps, b."values", b.created, b.stamps, b.model_ids)
        WITH ORDINALITY AS u(seq, step, value, created, stamp, model, ord)
    WHERE b.run_id = %(run)s
), points AS (
    SELECT * FROM moved UNION ALL SELECT * FROM packed
), written AS (
    INSERT INTO campaigns_metricblock (run_id, key_id, block, min_step, max_step, count,
        non_finite, seq0, seqs, steps, "values", created, stamps, model_ids)
    SELECT run_id, key_id, seq / %(size)s, min(step), max(step), count(*),
        count(*) FILTER (WHERE value IN ('NaN', 'Infinity', '-Infinity')), min(seq),
        CASE WHEN max(seq) - min(seq) + 1 = count(*) AND count(DISTINCT seq) = count(*)
             THEN NULL ELSE array_agg(seq ORDER BY seq) END,
        array_agg(step ORDER BY seq), array_agg(value ORDER BY seq),
        array_agg(created_at ORDER BY seq),
        CASE WHEN bool_or(timestamp_ms IS NOT NULL)
             THEN array_agg(timestamp_ms ORDER BY seq) END,
        CASE WHEN bool_or(model_id <> '') THEN array_agg(model_id ORDER BY seq) END
    FROM points GROUP BY run_id, key_id, seq / %(size)s
    ON CONFLICT (run_id, key_id, block) DO UPDATE SET min_step = EXCLUDED.min_step,
        max_step = EXCLUDED.max_step, count = EXCLUDED.count,
        non_finite = EXCLUDED.non_finite, seq0 = EXCLUDED.seq0, seqs = EXCLUDED.seqs,
        steps = EXCLUDED.steps, "values" = EXCLUDED."values", created = EXCLUDED.created,
        stamps = EXCLUDED.stamps, model_ids = EXCLUDED.model_ids
    RETURNING 1
)
SELECT (SELECT count(*) FROM moved), (SELECT count(*) FROM written)
"""


@dataclass(frozen=True)
class Packed:
    points: int  # hot rows moved into blocks
    blocks: int  # blocks written (new or grown)


@transaction.atomic
def pack_points(
    *, run_id: int, older_than: datetime | None = None, block_size: int = BLOCK_POINTS
) -> Packed:
    """Move the run's hot points (those logged before ``older_than``; None: all) into
    blocks, keeping every point: its step, value (NaN and ±Inf as they are), seq, logging
    time, client timestamp and model id. Idempotent (a second call finds nothing to move)
    and safe beside ingest: the run row is locked first, as ingest locks it, so a batch of
    this run is stored before or after, never during. ``block_size`` is fixed for a
    database (the bench compares sizes on fresh ones). A no-op on SQLite."""
    if connection.vendor != "postgresql":
        return Packed(0, 0)
    if not Run.objects.select_for_update().filter(pk=run_id).exists():
        return Packed(0, 0)
    sql = _PACK.format(cut=_CUT if older_than is not None else _NO_CUT)
    with connection.cursor() as cursor:
        # The grouping sorts a run's points: in memory (a 1,000,000-point run needs ~150 MB;
        # larger ones spill, as any sort), for this transaction only.
        cursor.execute("SET LOCAL work_mem = '64MB'")
        cursor.execute(sql, {"run": run_id, "horizon": older_than, "size": block_size})
        points, blocks = cursor.fetchone()
    return Packed(points, blocks)


class Link(NamedTuple):
    """A stored point, by what identifies it in either tier (its metric's key, step and seq:
    a hot row's primary key with the run; ``block``, the number of the block holding it,
    None for a hot row), and the model id to set on it."""

    key_id: int
    step: int
    seq: int
    block: int | None
    model_id: str


# Each block holding a linked point rewritten once, off its primary key, with all its links:
# the point's element is its place in the block's seq order (an array of "" when the block
# had no model id: NULL means no point of it has one).
_LINK = """
WITH w AS (
    SELECT * FROM unnest(%(keys)s::bigint[], %(blocks)s::integer[], %(seqs)s::integer[],
        %(models)s::varchar(40)[]) AS w(key, block, seq, model)
)
UPDATE campaigns_metricblock b SET model_ids = ARRAY(
    SELECT coalesce(w.model, e.model)
    FROM unnest(coalesce(b.model_ids, array_fill(''::varchar(40), ARRAY[b.count])))
        WITH ORDINALITY AS e(model, ord)
    LEFT JOIN w ON w.key = b.key_id AND w.block = b.block AND e.ord = CASE
        WHEN b.seqs IS NULL THEN w.seq - b.seq0 + 1 ELSE array_position(b.seqs, w.seq) END
    ORDER BY e.ord
)
FROM (SELECT DISTINCT key, block FROM w) t
WHERE b.run_id = %(run)s AND b.key_id = t.key AND b.block = t.block
"""


def link_models(*, run_id: int, links: Sequence[Link]) -> None:
    """Set each linked point's model id where it lies: the hot rows by their primary key (a
    statement per model id: log_model sends one), the packed points in one statement (their
    blocks' ``model_ids`` elements). The caller holds the run row locked
    (run_log.log_to_run), as pack_points takes it, so no point moves between the tiers
    meanwhile."""
    by_model: dict[str, list[tuple[int, int, int, int]]] = defaultdict(list)
    for link in links:
        if link.block is None:
            by_model[link.model_id].append((run_id, link.key_id, link.step, link.seq))
    for model_id, pks in by_model.items():
        MetricPoint.objects.filter(run_id=run_id, pk__in=pks).update(model_id=model_id)
    packed = [link for link in links if link.block is not None]
    if not packed:
        return
    params: dict[str, Any] = {
        "run": run_id,
        "keys": [link.key_id for link in packed],
        "blocks": [link.block for link in packed],
        "seqs": [link.seq for link in packed],
        "models": [link.model_id for link in packed],
    }
    with connection.cursor() as cursor:
        cursor.execute(_LINK, params)
