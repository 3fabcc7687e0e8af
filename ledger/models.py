"""The ledger (append-only money entries), deliverables with their checks, closing reports."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pgtrigger
from django.conf import settings
from django.db import models

from campaigns.models import Campaign, LotReservation, Run
from catalog.validators import currency_validator


class LedgerImmutable(Exception):
    """Ledger entries are append-only: corrections are new entries that reverse old ones."""


class EntryKind(models.TextChoices):
    RENTAL = "rental", "Rental (committed lots)"
    INCLUDED = "included", "Included expense"
    EXTERNAL = "external", "External cost (listed apart)"


class LedgerEntry(models.Model):
    campaign = models.ForeignKey(Campaign, on_delete=models.PROTECT, related_name="ledger")
    kind = models.CharField(max_length=10, choices=EntryKind.choices)
    description = models.CharField(max_length=300)
    amount = models.DecimalField(max_digits=14, decimal_places=2)
    currency = models.CharField(max_length=3, validators=[currency_validator])
    reverses = models.OneToOneField(
        "self", null=True, blank=True, on_delete=models.PROTECT, related_name="reversed_by"
    )
    reservation = models.OneToOneField(
        LotReservation,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="ledger_entry",
        help_text="The committed lot this rental entry posts (once per lot).",
    )
    run = models.ForeignKey(
        Run,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="ledger_entries",
        help_text="The finished hourly run whose cost this rental entry posts (once per run "
        "segment: a resumed run posts each stretch's hours once).",
    )
    run_segment = models.PositiveSmallIntegerField(default=1)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "id"]
        verbose_name_plural = "ledger entries"
        constraints = [
            models.UniqueConstraint(
                fields=["run", "run_segment"], name="ledger_run_segment_posted_once"
            )
        ]
        # On PostgreSQL the database itself refuses updates and deletes, whatever the caller.
        triggers = [
            pgtrigger.Protect(
                name="ledger_append_only", operation=pgtrigger.Update | pgtrigger.Delete
            )
        ]

    def __str__(self) -> str:
        return f"{self.kind} {self.amount} {self.currency}: {self.description}"

    def save(self, *args: Any, **kwargs: Any) -> None:
        if self.pk is not None and not kwargs.get("force_insert"):
            raise LedgerImmutable("ledger entries are append-only; post a reversal instead")
        super().save(*args, **kwargs)

    def delete(self, *args: Any, **kwargs: Any) -> Any:
        raise LedgerImmutable("ledger entries are append-only; post a reversal instead")


class DeliverableKind(models.TextChoices):
    PREDICTIONS = "predictions", "Predictions"
    ERROR_ANALYSIS = "error_analysis", "Error analysis"
    ARTIFACT = "artifact", "Reloadable artifact"
    ADAPTER = "adapter", "Adapter"
    OTHER = "other", "Other"


class Deliverable(models.Model):
    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="deliverables")
    kind = models.CharField(max_length=20, choices=DeliverableKind.choices)
    corpus_name = models.CharField(max_length=200)
    corpus_revision = models.CharField(max_length=200)
    run = models.ForeignKey(
        Run, null=True, blank=True, on_delete=models.PROTECT, related_name="deliverables"
    )
    expected_ids_ok = models.BooleanField(null=True, blank=True)
    reload_verified = models.BooleanField(null=True, blank=True)
    base_revision = models.CharField(max_length=200, blank=True)
    accepted = models.BooleanField(default=False)
    rejection_reasons = models.JSONField(default=list, blank=True)
    submitted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "id"]

    def __str__(self) -> str:
        verdict = "accepted" if self.accepted else "rejected"
        return f"{self.kind} for {self.corpus_name}@{self.corpus_revision} ({verdict})"


class DeliverableFile(models.Model):
    deliverable = models.ForeignKey(Deliverable, on_delete=models.CASCADE, related_name="files")
    path = models.CharField(max_length=1000)
    size_bytes = models.BigIntegerField()
    # Wider than a digest: a malformed one is kept as sent and named in the rejection reasons.
    sha256 = models.CharField(max_length=200)

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return f"{self.path} ({self.size_bytes} B)"


class ReportStatus(models.TextChoices):
    PENDING = "pending", "Pending"
    RUNNING = "running", "Running"
    READY = "ready", "Ready"
    FAILED = "failed", "Failed"


class Report(models.Model):
    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="reports")
    status = models.CharField(
        max_length=10, choices=ReportStatus.choices, default=ReportStatus.PENDING
    )
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    html = models.TextField(blank=True)
    markdown = models.TextField(blank=True)
    data = models.JSONField(null=True, blank=True)
    error = models.TextField(blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"Report #{self.pk} on {self.campaign} ({self.status})"


ZERO = Decimal("0.00")


# --- Alerts (docs/domain.md §19) --------------------------------------------------------------


class AlertKind(models.TextChoices):
    LOT_ENDING = "lot_ending", "Lot ending while runs run"
    CHECKPOINT_NOT_RETRIEVED = "checkpoint_not_retrieved", "Checkpoint not retrieved"
    BUDGET = "budget", "Budget"
    CALENDAR_SLACK = "calendar_slack", "Calendar slack negative"
    RUN_SILENT = "run_silent", "Run silent"


class Alert(models.Model):
    """A condition found by the alert scan, stored once while it holds (`key` names it: the
    lot, the budget share, the run), delivered by email and webhook."""

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="alerts")
    kind = models.CharField(max_length=30, choices=AlertKind.choices)
    key = models.CharField(max_length=200)
    message = models.TextField()
    raised_at = models.DateTimeField(auto_now_add=True)
    resolved_at = models.DateTimeField(null=True, blank=True)
    emailed_at = models.DateTimeField(null=True, blank=True)
    webhook_delivered_at = models.DateTimeField(null=True, blank=True)
    webhook_attempts = models.PositiveIntegerField(default=0)
    webhook_error = models.TextField(blank=True)

    class Meta:
        ordering = ["-raised_at", "-id"]
        constraints = [
            # One open alert per condition: the scan runs every few minutes and never repeats.
            models.UniqueConstraint(
                fields=["campaign", "kind", "key"],
                condition=models.Q(resolved_at__isnull=True),
                name="one_open_alert_per_condition",
            )
        ]

    def __str__(self) -> str:
        return f"{self.kind}: {self.message[:60]}"
