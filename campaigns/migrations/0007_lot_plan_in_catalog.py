"""A lot's plan now points at catalog.RentalPlan: the same table, so state only."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("campaigns", "0006_item_work_fields"),
        ("catalog", "0001_initial"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            # State only: the table and its rows stay where they are (docs/architecture.md).
            state_operations=[
                migrations.AlterField(
                    model_name="lotreservation",
                    name="plan",
                    field=models.ForeignKey(
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="+",
                        to="catalog.rentalplan",
                    ),
                ),
            ],
            database_operations=[],
        ),
    ]
