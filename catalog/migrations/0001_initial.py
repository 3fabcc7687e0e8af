"""GPU models and rental plans move from estimates to catalog: state only, same tables."""

from decimal import Decimal

import django.core.validators
import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    initial = True

    dependencies = [
        ("estimates", "0005_plan_duration_positive"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            # State only: the table and its rows stay where they are (docs/architecture.md).
            state_operations=[
                migrations.CreateModel(
                    name="GpuModel",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True,
                                primary_key=True,
                                serialize=False,
                                verbose_name="ID",
                            ),
                        ),
                        ("name", models.CharField(max_length=40, unique=True)),
                        ("memory_bytes", models.BigIntegerField()),
                        (
                            "peak_flops",
                            models.JSONField(
                                help_text="Precision → dense FLOP/s, e.g. {'bf16': 3.12e14}."
                            ),
                        ),
                        ("source", models.CharField(blank=True, max_length=300)),
                        (
                            "tdp_watts",
                            models.FloatField(
                                blank=True,
                                help_text="Board power from the datasheet, in watts (energy).",
                                null=True,
                            ),
                        ),
                    ],
                    options={
                        "db_table": "estimates_gpumodel",
                        "ordering": ["name"],
                    },
                ),
                migrations.CreateModel(
                    name="RentalPlan",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True,
                                primary_key=True,
                                serialize=False,
                                verbose_name="ID",
                            ),
                        ),
                        ("provider", models.CharField(max_length=60)),
                        ("name", models.CharField(max_length=100)),
                        (
                            "gpus_per_lot",
                            models.PositiveIntegerField(
                                default=1, validators=[django.core.validators.MinValueValidator(1)]
                            ),
                        ),
                        (
                            "duration_hours",
                            models.DecimalField(
                                decimal_places=2,
                                max_digits=9,
                                validators=[
                                    django.core.validators.MinValueValidator(Decimal("0.01"))
                                ],
                            ),
                        ),
                        ("price", models.DecimalField(decimal_places=2, max_digits=14)),
                        (
                            "currency",
                            models.CharField(
                                default="USD",
                                max_length=3,
                                validators=[
                                    django.core.validators.RegexValidator(
                                        "^[A-Z]{3}$", "Use a three-letter ISO 4217 code, e.g. USD."
                                    )
                                ],
                            ),
                        ),
                        ("note", models.CharField(blank=True, max_length=300)),
                        (
                            "illustrative",
                            models.BooleanField(
                                default=False,
                                help_text="A made-up catalogue figure, not a provider's published price.",
                            ),
                        ),
                        (
                            "gpu",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.PROTECT,
                                related_name="plans",
                                to="catalog.gpumodel",
                            ),
                        ),
                    ],
                    options={
                        "db_table": "estimates_rentalplan",
                        "ordering": ["provider", "gpu__name", "duration_hours"],
                        "constraints": [
                            models.UniqueConstraint(
                                fields=("provider", "name"), name="plan_name_unique"
                            )
                        ],
                    },
                ),
            ],
            database_operations=[],
        ),
    ]
