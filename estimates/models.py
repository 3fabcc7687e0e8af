"""The estimates persisted per campaign and item (the catalog lives in `catalog.models`).

Estimates are recomputed by Celery tasks when the plan changes or a pilot throughput arrives;
they are marked stale in between, and a periodic sweep re-enqueues those left stale too long.
"""

from __future__ import annotations

from typing import Any

from django.db import models

from catalog.models import RentalPlan
from estimates.domain import lot_selection


class EstimateStatus(models.TextChoices):
    STALE = "stale", "Stale (recompute queued)"
    FRESH = "fresh", "Fresh"
    FAILED = "failed", "Failed"


class Estimate(models.Model):
    campaign = models.ForeignKey(
        "campaigns.Campaign", on_delete=models.CASCADE, related_name="estimates"
    )
    item = models.ForeignKey(
        "campaigns.PlannedItem",
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="estimates",
    )
    # Bumped on every input change; a recompute only lands if it computed this version.
    input_version = models.PositiveIntegerField(default=0)
    computed_version = models.PositiveIntegerField(null=True, blank=True)
    status = models.CharField(
        max_length=10, choices=EstimateStatus.choices, default=EstimateStatus.STALE
    )
    stale_since = models.DateTimeField(null=True, blank=True)
    time_source = models.CharField(max_length=10, blank=True)
    inputs = models.JSONField(default=dict, blank=True)
    outputs = models.JSONField(default=dict, blank=True)
    computed_at = models.DateTimeField(null=True, blank=True)
    error = models.TextField(blank=True)

    class Meta:
        # Two partial constraints rather than NULLS NOT DISTINCT, which SQLite cannot enforce:
        # one campaign-level estimate (item is null) and one estimate per item.
        constraints = [
            models.UniqueConstraint(
                fields=["campaign"],
                condition=models.Q(item__isnull=True),
                name="one_campaign_estimate",
            ),
            models.UniqueConstraint(
                fields=["campaign", "item"],
                condition=models.Q(item__isnull=False),
                name="one_estimate_per_item",
            ),
        ]

    def __str__(self) -> str:
        target: Any = self.item or self.campaign
        return f"Estimate for {target} ({self.status})"


def plan_offer(plan: RentalPlan) -> lot_selection.RentalPlanOffer:
    """The pure lot selector's view of a rental plan row (needs `gpu` loaded)."""
    return lot_selection.RentalPlanOffer(
        provider=plan.provider,
        name=plan.name,
        gpu=plan.gpu.name,
        gpus_per_lot=plan.gpus_per_lot,
        gpu_memory_bytes=int(plan.gpu.memory_bytes),
        duration_hours=float(plan.duration_hours),
        price=plan.price,
        currency=plan.currency,
    )
