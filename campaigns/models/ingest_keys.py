"""Campaign-scoped ingest keys for training loops (only a digest is stored)."""

from __future__ import annotations

import hashlib

from django.conf import settings
from django.db import models

from .campaign import Campaign
from .choices import RunKind
from .plan import PlannedItem


class IngestKey(models.Model):
    """A campaign-scoped key for training loops: it may only append run data to its campaign.

    Only a SHA-256 digest is stored; the key itself is shown once, when created.
    """

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="ingest_keys")
    name = models.CharField(max_length=100, default="training loop")
    # A key bound to an item (and a run kind) lets an MLflow loop open runs without naming the
    # item itself: see docs/mlflow.md.
    item = models.ForeignKey(
        PlannedItem, null=True, blank=True, on_delete=models.SET_NULL, related_name="ingest_keys"
    )
    kind = models.CharField(max_length=10, choices=RunKind.choices, blank=True, default="")
    prefix = models.CharField(max_length=12, editable=False)
    digest = models.CharField(max_length=64, unique=True, editable=False)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"{self.prefix}… ({self.name})"

    @staticmethod
    def hash(raw: str) -> str:
        return hashlib.sha256(raw.encode()).hexdigest()

    @property
    def is_active(self) -> bool:
        return self.revoked_at is None
