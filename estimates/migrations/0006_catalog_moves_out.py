"""The catalog models leave the estimates app's state; their tables now belong to catalog."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("campaigns", "0007_lot_plan_in_catalog"),
        ("estimates", "0005_plan_duration_positive"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            # State only: the table and its rows stay where they are (docs/architecture.md).
            state_operations=[
                migrations.RemoveField(
                    model_name="rentalplan",
                    name="gpu",
                ),
                migrations.DeleteModel(
                    name="GpuModel",
                ),
                migrations.DeleteModel(
                    name="RentalPlan",
                ),
            ],
            database_operations=[],
        ),
    ]
