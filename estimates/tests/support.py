"""Shared test data and helpers for the estimates' Django tests."""

from __future__ import annotations

from decimal import Decimal
from io import StringIO
from typing import Any

from django.core.management import call_command
from django.db import transaction

from campaigns.models import Campaign, PlannedItem, Stage

# The body of docs/api.md's example.
API_EXAMPLE: dict[str, Any] = {
    "model": {
        "parameters": 7e9,
        "layers": 32,
        "hidden_size": 4096,
        "attention_heads": 32,
        "vocab_size": 32000,
    },
    "training": {
        "tokens": 1e12,
        "epochs": 1,
        "sequence_length": 4096,
        "micro_batch_size": 1,
        "precision": "bf16",
        "optimizer": "adamw",
        "activation_checkpointing": False,
    },
    "hardware": {
        "gpu": "A100-80GB",
        "count": 8,
        "utilization": 0.4,
        "zero_stage": 0,
        "tensor_parallel": 1,
        "pipeline_parallel": 1,
    },
    "pilot": {"tokens_per_second": 25000, "gpus": 8},
    "cost": {"hourly_rate_per_gpu": "1.50", "currency": "USD", "extra": "0.00"},
}


class CommittedTestData:
    """TestCase mixin: setUpTestData's transaction never commits, so the recomputes it queued
    stay pending in every test and would absorb the tests' own (one per transaction and
    campaign). Dropping them models the setup having committed."""

    def setUp(self) -> None:
        from estimates.services import _EnqueueRecompute

        connection = transaction.get_connection()
        connection.run_on_commit = [
            entry
            for entry in connection.run_on_commit
            if not isinstance(entry[1], _EnqueueRecompute)
        ]
        super().setUp()  # type: ignore[misc]


def load_seed() -> Campaign:
    """The demo campaign (docs/domain.md §7): 48 sequential hours on one RTX 4090, 72 h window."""
    call_command("load_demo", stdout=StringIO())
    return Campaign.objects.get(team__name="demo")


def grow_seed_by_30_hours_with_an_exploratory_item(campaign: Campaign) -> PlannedItem:
    """The growth of docs/domain.md §7: +18 h on the baseline and a 12 h exploratory X."""
    x = PlannedItem.objects.create(
        campaign=campaign,
        name="X",
        role="other",
        tier="exploratory",
        planned_hours=Decimal("12"),
        gpu="RTX-4090",
    )
    last = campaign.stages.get(name="Retrieve results")
    train_x = Stage.objects.create(
        campaign=campaign,
        name="Train X",
        kind="training",
        machine=True,
        resource="rtx4090-a",
        planned_hours=Decimal("12"),
        variant=x,
    )
    train_x.depends_on.add(last)
    baseline = campaign.stages.get(name="Train baseline")
    baseline.planned_hours = Decimal("28")
    baseline.save()
    return x
