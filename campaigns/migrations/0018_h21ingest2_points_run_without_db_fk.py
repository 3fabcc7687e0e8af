"""The points' run foreign key without its database constraint (docs/metric_store.md §5,
"Ingest cost"): the deferred per-row check cost one run-row lookup per point at commit.

PostgreSQL only drops the constraint that 0015 added after its copy (the partitions' copies of
it go with the parent's). SQLite keeps its table as it is: its REFERENCES clause would need a
table remake for a check that costs nothing there, and the ORM cascades either way."""

from typing import Any

from django.db import migrations, models

_DROP = "ALTER TABLE campaigns_metricpoint DROP CONSTRAINT IF EXISTS campaigns_metricpoint_run_fk"
_ADD = (
    "ALTER TABLE campaigns_metricpoint ADD CONSTRAINT campaigns_metricpoint_run_fk "
    "FOREIGN KEY (run_id) REFERENCES campaigns_run (id) DEFERRABLE INITIALLY DEFERRED"
)


def drop_run_fk(apps: Any, schema_editor: Any) -> None:
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(_DROP)


def add_run_fk(apps: Any, schema_editor: Any) -> None:
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(_ADD)


class Migration(migrations.Migration):
    dependencies = [
        ("campaigns", "0017_h21pack_metric_blocks"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[migrations.RunPython(drop_run_fk, add_run_fk)],
            state_operations=[
                migrations.AlterField(
                    model_name="metricpoint",
                    name="run",
                    field=models.ForeignKey(
                        db_constraint=False,
                        db_index=False,
                        on_delete=models.deletion.CASCADE,
                        related_name="metrics",
                        to="campaigns.run",
                    ),
                ),
            ],
        ),
    ]
