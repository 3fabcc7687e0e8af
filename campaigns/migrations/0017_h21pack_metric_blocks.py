# The packed tier of the metric store (docs/metric_store.md §3 "Two tiers"): a row per run,
# metric and block of 64 points (by seq), the points' fields as arrays. On PostgreSQL it is
# hash-partitioned by run as the points (16 partitions, run_id leading every key: Citus can
# distribute it by run beside them); SQLite gets a plain table that stays empty (only
# PostgreSQL packs), so the ORM's cascade from a run or a summary finds it.

import django.contrib.postgres.fields
import django.db.models.deletion
from django.db import migrations, models

PARTITIONS = 16

# Eight-byte columns first, then the four-byte ones, then the arrays: nothing padded.
_POSTGRES = [
    "CREATE TABLE campaigns_metricblock (run_id bigint NOT NULL, key_id bigint NOT NULL, "
    "min_step bigint NOT NULL, max_step bigint NOT NULL, block integer NOT NULL, "
    "count integer NOT NULL, non_finite integer NOT NULL, seq0 integer NOT NULL, "
    'seqs integer[] NULL, steps bigint[] NOT NULL, "values" double precision[] NOT NULL, '
    "created timestamp with time zone[] NOT NULL, stamps bigint[] NULL, "
    "model_ids varchar(40)[] NULL, "
    "CONSTRAINT campaigns_metricblock_pkey PRIMARY KEY (run_id, key_id, block)) "
    "PARTITION BY HASH (run_id)",
    *(
        f"CREATE TABLE campaigns_metricblock_p{i:02d} PARTITION OF campaigns_metricblock "
        f"FOR VALUES WITH (MODULUS {PARTITIONS}, REMAINDER {i})"
        for i in range(PARTITIONS)
    ),
    "ALTER TABLE campaigns_metricblock ADD CONSTRAINT campaigns_metricblock_run_fk "
    "FOREIGN KEY (run_id) REFERENCES campaigns_run (id) DEFERRABLE INITIALLY DEFERRED",
    "CREATE INDEX metric_block_steps ON campaigns_metricblock (run_id, key_id, min_step) "
    "INCLUDE (max_step, block)",
    "CREATE INDEX metric_block_non_finite ON campaigns_metricblock (run_id, key_id, block) "
    "WHERE non_finite > 0",
]


# SQLite has no arrays: text columns, never written (only PostgreSQL packs).
_SQLITE = [
    'CREATE TABLE "campaigns_metricblock" ("run_id" bigint NOT NULL REFERENCES "campaigns_run" '
    '("id") DEFERRABLE INITIALLY DEFERRED, "key_id" bigint NOT NULL, "block" integer NOT NULL, '
    '"min_step" bigint NOT NULL, "max_step" bigint NOT NULL, "count" integer NOT NULL, '
    '"non_finite" integer NOT NULL, "seq0" integer NOT NULL, "seqs" text NULL, '
    '"steps" text NOT NULL, "values" text NOT NULL, "created" text NOT NULL, '
    '"stamps" text NULL, "model_ids" text NULL, PRIMARY KEY ("run_id", "key_id", "block"))',
]


def create_blocks(apps, schema_editor):
    postgres = schema_editor.connection.vendor == "postgresql"
    for sql in _POSTGRES if postgres else _SQLITE:
        schema_editor.execute(sql)


def drop_blocks(apps, schema_editor):
    schema_editor.execute("DROP TABLE campaigns_metricblock")


class Migration(migrations.Migration):
    dependencies = [
        ("campaigns", "0016_h20_stop_rule_grace"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="MetricBlock",
                    fields=[
                        (
                            "pk",
                            models.CompositePrimaryKey(
                                "run",
                                "key",
                                "block",
                                blank=True,
                                editable=False,
                                primary_key=True,
                                serialize=False,
                            ),
                        ),
                        ("block", models.IntegerField()),
                        ("min_step", models.BigIntegerField()),
                        ("max_step", models.BigIntegerField()),
                        ("count", models.IntegerField()),
                        ("non_finite", models.IntegerField()),
                        ("seq0", models.IntegerField()),
                        (
                            "seqs",
                            django.contrib.postgres.fields.ArrayField(
                                base_field=models.IntegerField(), null=True, size=None
                            ),
                        ),
                        (
                            "steps",
                            django.contrib.postgres.fields.ArrayField(
                                base_field=models.BigIntegerField(), size=None
                            ),
                        ),
                        (
                            "values",
                            django.contrib.postgres.fields.ArrayField(
                                base_field=models.FloatField(), size=None
                            ),
                        ),
                        (
                            "created",
                            django.contrib.postgres.fields.ArrayField(
                                base_field=models.DateTimeField(), size=None
                            ),
                        ),
                        (
                            "stamps",
                            django.contrib.postgres.fields.ArrayField(
                                base_field=models.BigIntegerField(null=True), null=True, size=None
                            ),
                        ),
                        (
                            "model_ids",
                            django.contrib.postgres.fields.ArrayField(
                                base_field=models.CharField(max_length=40), null=True, size=None
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
                        (
                            "run",
                            models.ForeignKey(
                                db_index=False,
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="+",
                                to="campaigns.run",
                            ),
                        ),
                    ],
                    options={
                        "indexes": [
                            models.Index(
                                fields=["run", "key", "min_step"],
                                include=("max_step", "block"),
                                name="metric_block_steps",
                            ),
                            models.Index(
                                condition=models.Q(("non_finite__gt", 0)),
                                fields=["run", "key", "block"],
                                name="metric_block_non_finite",
                            ),
                        ],
                    },
                ),
            ],
        ),
        # After the state: the SQLite branch creates the model as the state now has it.
        migrations.RunPython(create_blocks, drop_blocks),
    ]
