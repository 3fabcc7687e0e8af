"""Existing runs' clocks (docs/domain.md §5.8), in a migration of their own after the
columns exist: PostgreSQL refuses to alter a table whose rows the same transaction updated
("pending trigger events")."""

from django.db import migrations, models


def started_when_created(apps, schema_editor):
    """A run logged before runs measured their time started at its creation and ended at its
    finish (docs/domain.md §5.8); its recorded hours are left as they are."""
    Run = apps.get_model("campaigns", "Run")
    Run.objects.update(started_at=models.F("created_at"))
    Run.objects.filter(finished_at__isnull=False).update(ended_at=models.F("finished_at"))
    # An unfinished run was last heard from at its last point, checkpoint, throughput or stop:
    # the silence sweep ends it there, not at its creation.
    for run in Run.objects.filter(finished_at__isnull=True):
        heard = [run.created_at, run.stopped_at, run.segment_started_at]
        for related in ("metric_summaries", "checkpoints", "throughputs"):
            field = "last_at" if related == "metric_summaries" else "created_at"
            heard.append(getattr(run, related).aggregate(m=models.Max(field))["m"])
        run.heartbeat_at = max(moment for moment in heard if moment is not None)
        run.save(update_fields=["heartbeat_at"])


class Migration(migrations.Migration):
    dependencies = [
        ("campaigns", "0026_i30_run_clock"),
    ]

    operations = [
        migrations.RunPython(started_when_created, migrations.RunPython.noop),
    ]
