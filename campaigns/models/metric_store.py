"""The metric store: raw points, per-(run, metric) summaries and 2^k-step rollups
(docs/metric_store.md)."""

from __future__ import annotations

from django.contrib.postgres.fields import ArrayField
from django.db import models
from django.utils import timezone

from .runs import Run


class MetricPoint(models.Model):
    """One logged value. Lean (docs/metric_store.md §2): the metric is its run's summary id
    (``key``), not the name's text; no surrogate id, the primary key ``(run, key, step, seq)``
    is the only full index (``seq``: the point's position in its metric's log, so repeated
    steps stay distinct). On PostgreSQL the table is hash-partitioned by run (migration
    0015_h21store_lean_points)."""

    pk = models.CompositePrimaryKey("run", "key", "step", "seq")
    # The primary key leads with the run: no index of its own. No database constraint either
    # (migration 0018_h21ingest2_points_run_without_db_fk): PostgreSQL checked it per point at
    # commit (a deferred RI trigger, one `SELECT … FOR KEY SHARE` of the run row per inserted
    # row, each walking the row's dead versions that every batch's `last_step` update leaves).
    # Points are written only by the ingest service, which holds the run row `FOR UPDATE` in the
    # same transaction, so the run exists; a run's points go with it through the ORM's cascade
    # (a fast delete by `run_id`, tested in test_metric_point_cascade.py).
    run = models.ForeignKey(
        Run,
        on_delete=models.CASCADE,
        related_name="metrics",
        db_index=False,
        db_constraint=False,
    )
    # No database constraint: a per-row check at ingest for a key the same transaction has
    # just upserted; the ORM still deletes a summary's points with it.
    key = models.ForeignKey(
        "MetricSummary",
        # The run's cascade deletes a run's points by run_id; a cascade by key would be a
        # second DELETE ... WHERE key_id IN (...), which no index leads with: a scan of every
        # partition. Nothing deletes a summary but its run's delete.
        on_delete=models.DO_NOTHING,
        related_name="+",
        db_index=False,
        db_constraint=False,
    )
    step = models.BigIntegerField()
    seq = models.IntegerField()
    # PostgreSQL's double precision keeps NaN and ±Inf; SQLite turns NaN into NULL, so the
    # token is also kept as text when the value is not finite.
    value = models.FloatField(null=True)
    non_finite = models.CharField(max_length=9, blank=True, default="")
    created_at = models.DateTimeField(default=timezone.now)
    # What the client said: MLflow's millisecond timestamp (None when not sent) and the logged
    # model the point describes (MLflow 3's model_id, "" for none).
    timestamp_ms = models.BigIntegerField(null=True, blank=True)
    model_id = models.CharField(max_length=40, blank=True, default="")

    class Meta:
        indexes = [
            # The non-finite points alone (a series read keeps every one): a few rows.
            models.Index(
                fields=["run", "key", "step"],
                name="metric_point_non_finite",
                condition=~models.Q(non_finite=""),
            ),
        ]

    def __str__(self) -> str:
        return f"{self.key_id}@{self.step}={self.as_float()}"

    @property
    def name(self) -> str:
        """The metric's name (from its summary: select_related("key") where many are read)."""
        return self.key.name

    def as_float(self) -> float:
        return (
            float(self.non_finite.replace("Infinity", "inf"))
            if self.non_finite
            else float(self.value or 0.0)
        )


class MetricSummary(models.Model):
    """One row per (run, metric): what the report, the alert scan and the compare page read
    instead of the points (docs/metric_store.md §1). Upserted in the ingest
    transaction by campaigns/services/metric_store.py; the rule is
    campaigns/domain/metric_rollups.py. Its id is the metric's small key within the run."""

    # The unique (run, name) constraint is its index.
    run = models.ForeignKey(
        Run, on_delete=models.CASCADE, related_name="metric_summaries", db_index=False
    )
    name = models.CharField(max_length=250)
    count = models.BigIntegerField()
    first_step = models.BigIntegerField()
    last_step = models.BigIntegerField()
    # The point at the largest step (the later-logged of equal steps). SQLite keeps NaN as
    # NULL, so the token says which non-finite value it was, as on the points.
    last_value = models.FloatField(null=True)
    last_token = models.CharField(max_length=9, blank=True, default="")
    min_value = models.FloatField(null=True)  # finite values only
    max_value = models.FloatField(null=True)
    non_finite = models.BigIntegerField(default=0)
    first_at = models.DateTimeField()
    last_at = models.DateTimeField()
    # False once the retention dropped the raw points (docs/domain.md): the series is then
    # drawn from the rollups whatever its length.
    points_kept = models.BooleanField(default=True, db_default=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["run", "name"], name="metric_summary_run_name")
        ]
        indexes = [
            # The runs table's metric columns (docs/domain.md §5.10): one metric's summaries
            # across a campaign's runs, read off this index instead of a scan of every summary.
            # Neither column changes once the row exists, so the ingest's upsert of a summary
            # stays a HOT update; only a run's new metric adds an entry.
            models.Index(fields=["name", "run"], name="metric_summary_name_run"),
        ]

    def __str__(self) -> str:
        return f"{self.name}: {self.count} points"


class MetricRollup(models.Model):
    """One metric's points in a bucket of 2^level steps (bucket = step >> level): count, the
    finite extremes with their steps, the first and last non-finite point. The series read at
    max_points takes one level's buckets instead of the points."""

    pk = models.CompositePrimaryKey("run", "summary", "level", "bucket")
    # The primary key (run first) is their index.
    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="+", db_index=False)
    summary = models.ForeignKey(
        MetricSummary, on_delete=models.CASCADE, related_name="+", db_index=False
    )
    level = models.PositiveSmallIntegerField()
    bucket = models.BigIntegerField()
    count = models.BigIntegerField()
    min_step = models.BigIntegerField(null=True)
    min_value = models.FloatField(null=True)
    max_step = models.BigIntegerField(null=True)
    max_value = models.FloatField(null=True)
    non_finite = models.BigIntegerField(default=0)
    first_nf_step = models.BigIntegerField(null=True)
    first_nf = models.CharField(max_length=9, blank=True, default="")
    last_nf_step = models.BigIntegerField(null=True)
    last_nf = models.CharField(max_length=9, blank=True, default="")

    def __str__(self) -> str:
        return f"{self.summary_id}@{self.level}:{self.bucket}"


class MetricBlock(models.Model):
    """The packed tier (PostgreSQL only, docs/metric_store.md §3 "Two tiers"): up to
    ``BLOCK_POINTS`` consecutive points of one metric (by ``seq``) in one row, as arrays in
    ``seq`` order, so a point costs its 8-byte step, value and logging time instead of a
    ~130-byte row and index entry. campaigns/services/metric_packing.py moves hot
    ``MetricPoint`` rows here; every raw reader reads both tiers through
    ``run_metrics.raw_points``. Hash-partitioned by run like the points (migration
    0017_h21pack_metric_blocks); the table exists on SQLite too, always empty, so deleting a
    run cascades the same way."""

    pk = models.CompositePrimaryKey("run", "key", "block")
    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="+", db_index=False)
    key = models.ForeignKey(
        "MetricSummary",
        on_delete=models.DO_NOTHING,  # deleted with its run, by run_id (as the points)
        related_name="+",
        db_index=False,
        db_constraint=False,
    )
    block = models.IntegerField()  # seq // BLOCK_POINTS
    min_step = models.BigIntegerField()
    max_step = models.BigIntegerField()
    count = models.IntegerField()
    non_finite = models.IntegerField()  # how many of its values are NaN or ±Inf
    # The first point's seq; ``seqs`` is NULL when the points are seq0, seq0 + 1, … (always,
    # unless points of the metric were deleted one by one).
    seq0 = models.IntegerField()
    seqs = ArrayField(models.IntegerField(), null=True)
    steps = ArrayField(models.BigIntegerField())
    # double precision keeps NaN and ±Inf: the token is derived from the value.
    values = ArrayField(models.FloatField())
    created = ArrayField(models.DateTimeField())
    # What the client sent, NULL when it sent nothing for any point of the block.
    stamps = ArrayField(models.BigIntegerField(null=True), null=True)
    model_ids = ArrayField(models.CharField(max_length=40), null=True)

    class Meta:
        indexes = [
            # The step range of each block without its arrays: the keyset pages and the
            # point look-ups by step pick their blocks off it (an index-only scan).
            models.Index(
                fields=["run", "key", "min_step"],
                include=["max_step", "block"],
                name="metric_block_steps",
            ),
            # The blocks holding a non-finite point (a series read keeps every one), as the
            # points' partial index.
            models.Index(
                fields=["run", "key", "block"],
                name="metric_block_non_finite",
                condition=models.Q(non_finite__gt=0),
            ),
        ]

    def __str__(self) -> str:
        return f"{self.key_id}#{self.block}: {self.count} points"
