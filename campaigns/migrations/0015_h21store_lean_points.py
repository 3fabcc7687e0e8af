# The lean point layout (docs/metric_store.md §2): the point's metric becomes its summary id,
# the surrogate id and the (run, name, step) index go, the primary key is (run, key, step, seq);
# on PostgreSQL the table is hash-partitioned by run. Existing points are copied run by run
# (seq: their position in their metric's log, by the old id) and counted before the old table
# is dropped: nothing stored is lost.

import django.db.models.deletion
import django.utils.timezone
from django.db import migrations, models

PARTITIONS = 16

_COLUMNS = "run_id, key_id, step, value, created_at, timestamp_ms, seq, non_finite, model_id"

# Eight-byte columns first, then the int and the short texts: no alignment padding.
_POSTGRES = [
    "ALTER TABLE campaigns_metricpoint RENAME TO campaigns_metricpoint_old",
    "ALTER TABLE campaigns_metricpoint_old RENAME CONSTRAINT campaigns_metricpoint_pkey "
    "TO campaigns_metricpoint_old_pkey",
    "CREATE TABLE campaigns_metricpoint (run_id bigint NOT NULL, key_id bigint NOT NULL, "
    "step bigint NOT NULL, value double precision NULL, created_at timestamp with time zone "
    "NOT NULL, timestamp_ms bigint NULL, seq integer NOT NULL, non_finite varchar(9) NOT NULL, "
    "model_id varchar(40) NOT NULL, CONSTRAINT campaigns_metricpoint_pkey "
    "PRIMARY KEY (run_id, key_id, step, seq)) PARTITION BY HASH (run_id)",
    *(
        f"CREATE TABLE campaigns_metricpoint_p{i:02d} PARTITION OF campaigns_metricpoint "
        f"FOR VALUES WITH (MODULUS {PARTITIONS}, REMAINDER {i})"
        for i in range(PARTITIONS)
    ),
]

# Added after the copy: one check of every row instead of a deferred trigger per row.
_FOREIGN_KEY = (
    "ALTER TABLE campaigns_metricpoint ADD CONSTRAINT campaigns_metricpoint_run_fk "
    "FOREIGN KEY (run_id) REFERENCES campaigns_run (id) DEFERRABLE INITIALLY DEFERRED"
)

# The rollups the same way (PostgreSQL only): one run's buckets in one partition, as its points.
_ROLLUPS = [
    "ALTER TABLE campaigns_metricrollup RENAME TO campaigns_metricrollup_old",
    "ALTER TABLE campaigns_metricrollup_old RENAME CONSTRAINT campaigns_metricrollup_pkey "
    "TO campaigns_metricrollup_old_pkey",
    "CREATE TABLE campaigns_metricrollup (LIKE campaigns_metricrollup_old INCLUDING DEFAULTS) "
    "PARTITION BY HASH (run_id)",
    "ALTER TABLE campaigns_metricrollup ADD CONSTRAINT campaigns_metricrollup_pkey "
    "PRIMARY KEY (run_id, summary_id, level, bucket)",
    *(
        f"CREATE TABLE campaigns_metricrollup_p{i:02d} PARTITION OF campaigns_metricrollup "
        f"FOR VALUES WITH (MODULUS {PARTITIONS}, REMAINDER {i})"
        for i in range(PARTITIONS)
    ),
    "INSERT INTO campaigns_metricrollup SELECT * FROM campaigns_metricrollup_old",
    "ALTER TABLE campaigns_metricrollup ADD CONSTRAINT campaigns_metricrollup_run_fk "
    "FOREIGN KEY (run_id) REFERENCES campaigns_run (id) DEFERRABLE INITIALLY DEFERRED",
    "ALTER TABLE campaigns_metricrollup ADD CONSTRAINT campaigns_metricrollup_summary_fk "
    "FOREIGN KEY (summary_id) REFERENCES campaigns_metricsummary (id) "
    "DEFERRABLE INITIALLY DEFERRED",
    "DROP TABLE campaigns_metricrollup_old",
]

# Back to one plain rollup table.
_BACK_ROLLUPS = [
    "ALTER TABLE campaigns_metricrollup RENAME TO campaigns_metricrollup_parts",
    "ALTER TABLE campaigns_metricrollup_parts RENAME CONSTRAINT campaigns_metricrollup_pkey "
    "TO campaigns_metricrollup_parts_pkey",
    "CREATE TABLE campaigns_metricrollup (LIKE campaigns_metricrollup_parts INCLUDING DEFAULTS)",
    "ALTER TABLE campaigns_metricrollup ADD CONSTRAINT campaigns_metricrollup_pkey "
    "PRIMARY KEY (run_id, summary_id, level, bucket)",
    "INSERT INTO campaigns_metricrollup SELECT * FROM campaigns_metricrollup_parts",
    "ALTER TABLE campaigns_metricrollup ADD CONSTRAINT campaigns_metricrollup_run_fk "
    "FOREIGN KEY (run_id) REFERENCES campaigns_run (id) DEFERRABLE INITIALLY DEFERRED",
    "ALTER TABLE campaigns_metricrollup ADD CONSTRAINT campaigns_metricrollup_summary_fk "
    "FOREIGN KEY (summary_id) REFERENCES campaigns_metricsummary (id) "
    "DEFERRABLE INITIALLY DEFERRED",
    "DROP TABLE campaigns_metricrollup_parts",
]

_SQLITE = [
    'ALTER TABLE "campaigns_metricpoint" RENAME TO "campaigns_metricpoint_old"',
    'DROP INDEX IF EXISTS "metric_run_name_step"',
    'DROP INDEX IF EXISTS "metric_non_finite"',
    'CREATE TABLE "campaigns_metricpoint" ("run_id" bigint NOT NULL REFERENCES "campaigns_run" '
    '("id") DEFERRABLE INITIALLY DEFERRED, "key_id" bigint NOT NULL, "step" bigint NOT NULL, '
    '"value" real NULL, "created_at" datetime NOT NULL, "timestamp_ms" bigint NULL, '
    '"seq" integer NOT NULL, "non_finite" varchar(9) NOT NULL, "model_id" varchar(40) NOT NULL, '
    'PRIMARY KEY ("run_id", "key_id", "step", "seq"))',
]

_INDEX = (
    "CREATE INDEX metric_point_non_finite ON campaigns_metricpoint (run_id, key_id, step) "
    "WHERE NOT (non_finite = '')"
)

# One run at a time; seq numbers each metric's points in logging order from 0, as the ingest
# continues from the summary's count.
_COPY_RUN = (
    f"INSERT INTO campaigns_metricpoint ({_COLUMNS}) "
    "SELECT p.run_id, s.id, p.step, p.value, p.created_at, p.timestamp_ms, "
    "CAST(row_number() OVER (PARTITION BY p.name ORDER BY p.id) - 1 AS integer), "
    "p.non_finite, p.model_id "
    "FROM campaigns_metricpoint_old p JOIN campaigns_metricsummary s "
    "ON s.run_id = p.run_id AND s.name = p.name WHERE p.run_id = %s"
)


def _count(cursor, sql, params=()):
    cursor.execute(sql, params)
    return cursor.fetchone()[0]


def lean_points(apps, schema_editor):
    """The new table, every old point copied into it run by run, the counts compared."""
    connection = schema_editor.connection
    postgres = connection.vendor == "postgresql"
    with connection.cursor() as cursor:
        for sql in _POSTGRES if postgres else _SQLITE:
            cursor.execute(sql)
        cursor.execute(_INDEX)
        cursor.execute("SELECT DISTINCT run_id FROM campaigns_metricpoint_old")
        for (run_pk,) in cursor.fetchall():
            cursor.execute(_COPY_RUN, [run_pk])
        old = _count(cursor, "SELECT count(*) FROM campaigns_metricpoint_old")
        new = _count(cursor, "SELECT count(*) FROM campaigns_metricpoint")
        if old != new:
            # A point without its summary would be lost: refuse (the transaction rolls back).
            raise RuntimeError(f"{old - new} metric points have no summary; nothing was moved")
        if postgres:
            cursor.execute(_FOREIGN_KEY)
        cursor.execute("DROP TABLE campaigns_metricpoint_old")
        for sql in _ROLLUPS if postgres else []:
            cursor.execute(sql)


_OLD_COLUMNS = "run_id, name, step, value, non_finite, created_at, timestamp_ms, model_id"

_BACK_POSTGRES = [
    "ALTER TABLE campaigns_metricpoint RENAME TO campaigns_metricpoint_lean",
    "ALTER TABLE campaigns_metricpoint_lean RENAME CONSTRAINT campaigns_metricpoint_pkey "
    "TO campaigns_metricpoint_lean_pkey",
    "DROP INDEX IF EXISTS metric_point_non_finite",
    "CREATE TABLE campaigns_metricpoint (id bigint NOT NULL PRIMARY KEY GENERATED BY DEFAULT "
    "AS IDENTITY, run_id bigint NOT NULL REFERENCES campaigns_run (id) DEFERRABLE INITIALLY "
    "DEFERRED, name varchar(250) NOT NULL, step bigint NOT NULL, value double precision NULL, "
    "non_finite varchar(9) NOT NULL, created_at timestamp with time zone NOT NULL, "
    "timestamp_ms bigint NULL, model_id varchar(40) NOT NULL)",
]

_BACK_SQLITE = [
    'ALTER TABLE "campaigns_metricpoint" RENAME TO "campaigns_metricpoint_lean"',
    'DROP INDEX IF EXISTS "metric_point_non_finite"',
    'CREATE TABLE "campaigns_metricpoint" ("id" integer NOT NULL PRIMARY KEY AUTOINCREMENT, '
    '"run_id" bigint NOT NULL REFERENCES "campaigns_run" ("id") DEFERRABLE INITIALLY DEFERRED, '
    '"name" varchar(250) NOT NULL, "step" bigint NOT NULL, "value" real NULL, '
    '"non_finite" varchar(9) NOT NULL, "created_at" datetime NOT NULL, '
    '"timestamp_ms" bigint NULL, "model_id" varchar(40) NOT NULL)',
]

_BACK_INDEXES = [
    "CREATE INDEX metric_run_name_step ON campaigns_metricpoint (run_id, name, step)",
    "CREATE INDEX metric_non_finite ON campaigns_metricpoint (run_id, name, step) "
    "WHERE NOT (non_finite = '')",
]


def name_points(apps, schema_editor):
    """Back to one row per point with its name, in logging order (ids follow seq)."""
    connection = schema_editor.connection
    postgres = connection.vendor == "postgresql"
    with connection.cursor() as cursor:
        for sql in [*(_BACK_POSTGRES if postgres else _BACK_SQLITE), *_BACK_INDEXES]:
            cursor.execute(sql)
        cursor.execute(
            f"INSERT INTO campaigns_metricpoint ({_OLD_COLUMNS}) SELECT p.run_id, s.name, p.step, "
            "p.value, p.non_finite, p.created_at, p.timestamp_ms, p.model_id "
            "FROM campaigns_metricpoint_lean p JOIN campaigns_metricsummary s ON s.id = p.key_id "
            "ORDER BY p.run_id, p.seq, p.key_id"
        )
        cursor.execute("DROP TABLE campaigns_metricpoint_lean")
        for sql in _BACK_ROLLUPS if postgres else []:
            cursor.execute(sql)


class Migration(migrations.Migration):
    dependencies = [
        ("campaigns", "0014_h19keys_sealed_secrets_hashed_tokens"),
    ]

    operations = [
        migrations.AddField(
            model_name="metricsummary",
            name="points_kept",
            field=models.BooleanField(db_default=True, default=True),
        ),
        migrations.AddField(
            model_name="team",
            name="metric_retention_days",
            field=models.PositiveIntegerField(
                blank=True,
                help_text="Raw metric points older than this many days are dropped (curves stay).",
                null=True,
            ),
        ),
        migrations.SeparateDatabaseAndState(
            database_operations=[migrations.RunPython(lean_points, name_points, elidable=False)],
            state_operations=[
                migrations.DeleteModel(name="MetricPoint"),
                migrations.CreateModel(
                    name="MetricPoint",
                    fields=[
                        (
                            "pk",
                            models.CompositePrimaryKey(
                                "run",
                                "key",
                                "step",
                                "seq",
                                blank=True,
                                editable=False,
                                primary_key=True,
                                serialize=False,
                            ),
                        ),
                        (
                            "run",
                            models.ForeignKey(
                                db_index=False,
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="metrics",
                                to="campaigns.run",
                            ),
                        ),
                        (
                            "key",
                            models.ForeignKey(
                                db_constraint=False,
                                db_index=False,
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="+",
                                to="campaigns.metricsummary",
                            ),
                        ),
                        ("step", models.BigIntegerField()),
                        ("seq", models.IntegerField()),
                        ("value", models.FloatField(null=True)),
                        (
                            "non_finite",
                            models.CharField(blank=True, default="", max_length=9),
                        ),
                        (
                            "created_at",
                            models.DateTimeField(default=django.utils.timezone.now),
                        ),
                        ("timestamp_ms", models.BigIntegerField(blank=True, null=True)),
                        (
                            "model_id",
                            models.CharField(blank=True, default="", max_length=40),
                        ),
                    ],
                    options={
                        "indexes": [
                            models.Index(
                                condition=models.Q(("non_finite", ""), _negated=True),
                                fields=["run", "key", "step"],
                                name="metric_point_non_finite",
                            )
                        ],
                    },
                ),
            ],
        ),
    ]
