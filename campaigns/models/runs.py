"""Runs logged against a campaign, their segments, throughput samples, checkpoints and artifacts."""

from __future__ import annotations

import hashlib
from datetime import datetime
from decimal import Decimal
from typing import Any

from django.conf import settings
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models.functions import Now
from django.utils import timezone

from catalog.validators import no_bidi_controls

from .campaign import Campaign
from .choices import RunKind, RunStatus
from .columns import HOURS
from .plan import PlannedItem, StopRule
from .teams import Team


class Run(models.Model):
    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="+")
    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="runs")
    run_id = models.CharField(max_length=200)
    variant = models.ForeignKey(
        PlannedItem, null=True, blank=True, on_delete=models.PROTECT, related_name="runs"
    )
    kind = models.CharField(max_length=10, choices=RunKind.choices, default=RunKind.FULL)
    # GPUs the run occupies: its GPU-hours (hence its cost) are its hours × this.
    gpus = models.PositiveIntegerField(default=1, validators=[MinValueValidator(1)])
    config = models.JSONField(default=dict, blank=True)
    config_digest = models.CharField(max_length=64)
    status = models.CharField(max_length=10, choices=RunStatus.choices, default=RunStatus.RUNNING)
    stop_rule = models.ForeignKey(
        StopRule, null=True, blank=True, on_delete=models.PROTECT, related_name="stopped_runs"
    )
    stop_reason = models.TextField(blank=True)
    stop_step = models.BigIntegerField(null=True, blank=True)
    stopped_at = models.DateTimeField(null=True, blank=True)
    # The run's hours, what observed hours and its cost count (docs/domain.md §5.8): the
    # measured hours, unless the finish stated others or a person corrected them (with a
    # reason, kept in RunHoursCorrection).
    observed_hours = models.DecimalField(**HOURS, null=True, blank=True)  # type: ignore[arg-type]
    # Database defaults too, so a raw insert (bench/report's COPY) needs no new columns.
    observed_reason = models.TextField(blank=True, default="", db_default="")
    # What the run's own clock said when it ended (campaigns/domain/run_hours.py).
    measured_hours = models.DecimalField(**HOURS, null=True, blank=True)  # type: ignore[arg-type]
    last_step = models.BigIntegerField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    # The client's start (else the creation), the last time it was heard from, and the end of
    # its wall time (the client's end, else the finish; a silent run's last heartbeat).
    started_at = models.DateTimeField(default=timezone.now, db_default=Now())
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    heartbeat_seconds = models.PositiveIntegerField(
        null=True, blank=True, validators=[MinValueValidator(1), MaxValueValidator(86_400)]
    )
    ended_at = models.DateTimeField(null=True, blank=True)
    # Ended by the sweep for silence: a heartbeat from it later resumes it (a new segment).
    ended_silent = models.BooleanField(default=False, db_default=False)
    # When the server recorded the end (None: not finished).
    finished_at = models.DateTimeField(null=True, blank=True)
    # Free-form labels (MLflow's run tags, `mlflow.*` system tags included): kept, not
    # interpreted.
    tags = models.JSONField(default=dict, blank=True)
    # MLflow's run name: display text, any characters, renamable; `run_id` stays the
    # identifier (docs/mlflow.md).
    run_name = models.CharField(
        max_length=500, blank=True, default="", validators=[no_bidi_controls]
    )
    # Dataset inputs as MLflow logs them: [{"dataset": {name, digest, source_type, source,
    # schema, profile}, "tags": [{key, value}]}], one per (name, digest).
    inputs = models.JSONField(default=list, blank=True)
    # MLflow's soft delete (runs/delete, runs/restore): hidden from search, kept with its data.
    deleted_at = models.DateTimeField(null=True, blank=True)
    # Resumed runs (docs/domain.md §11.6): the current segment started here (None: at
    # started_at), and the hours of the earlier segments (RunSegment) add up to prior_hours.
    segment_started_at = models.DateTimeField(null=True, blank=True)
    prior_hours = models.DecimalField(**HOURS, default=Decimal("0"))  # type: ignore[arg-type]
    # The last time data arrived after the run had finished (docs/domain.md §5.9: MLflow's
    # client logs to a finished run, Lightning's test() after fit()); its status and hours
    # stayed as they were.
    late_data_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["created_at", "id"]
        constraints = [
            models.UniqueConstraint(fields=["team", "run_id"], name="run_id_unique_in_team")
        ]
        # The silence sweep reads the runs not finished yet, by their last heartbeat.
        indexes = [
            models.Index(
                fields=["heartbeat_at"],
                condition=models.Q(finished_at__isnull=True),
                name="run_unfinished_heartbeat",
            )
        ]

    def __str__(self) -> str:
        return self.run_id

    @property
    def display_name(self) -> str:
        """What people read (docs/domain.md §25): MLflow's run name, else the run id (an MLflow
        run's id is 32 hex digits nobody recognises)."""
        return self.run_name or self.run_id

    @property
    def segment_start(self) -> datetime:
        """Where the run's current stretch began: its start, or its last resumption."""
        return self.segment_started_at or self.started_at

    @staticmethod
    def digest_config(config: Any) -> str:
        import json

        return hashlib.sha256(
            json.dumps(config, sort_keys=True, separators=(",", ":")).encode()
        ).hexdigest()


class RunSegment(models.Model):
    """An ended stretch of a resumed run: a run that failed (not completed, not stopped by a
    rule) can be set running again; each stretch keeps its own hours, so its cost counts
    once (docs/domain.md §11.6)."""

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="segments")
    number = models.PositiveIntegerField()
    started_at = models.DateTimeField()
    ended_at = models.DateTimeField()
    status = models.CharField(max_length=10, choices=RunStatus.choices)
    hours = models.DecimalField(**HOURS)  # type: ignore[arg-type]
    last_step = models.BigIntegerField(null=True, blank=True)

    class Meta:
        ordering = ["run", "number"]
        constraints = [
            models.UniqueConstraint(fields=["run", "number"], name="run_segment_number_unique")
        ]

    def __str__(self) -> str:
        return f"segment {self.number} of {self.run_id}: {self.hours} h"


class RunHoursCorrection(models.Model):
    """A person's correction of a run's hours, kept like an amendment: before, after, who,
    when and why (docs/domain.md §5.8). The run's `observed_hours` holds the corrected figure."""

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="hours_corrections")
    before = models.DecimalField(**HOURS, null=True, blank=True)  # type: ignore[arg-type]
    after = models.DecimalField(**HOURS)  # type: ignore[arg-type]
    reason = models.TextField()
    made_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    made_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["made_at", "id"]

    def __str__(self) -> str:
        return f"{self.run_id}: {self.before} h → {self.after} h"


class ThroughputSample(models.Model):
    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="throughputs")
    samples_per_second = models.FloatField(null=True, blank=True)
    tokens_per_second = models.FloatField(null=True, blank=True)
    gpus = models.PositiveIntegerField(default=1)
    measured_seconds = models.FloatField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "id"]

    def __str__(self) -> str:
        unit = "tokens" if self.tokens_per_second else "samples"
        rate = self.tokens_per_second or self.samples_per_second
        return f"{rate} {unit}/s on {self.gpus} GPU(s)"


class Checkpoint(models.Model):
    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="checkpoints")
    step = models.BigIntegerField()
    components = models.JSONField(default=list)
    size_bytes = models.BigIntegerField(null=True, blank=True)
    write_seconds = models.FloatField(null=True, blank=True)
    restore_seconds = models.FloatField(null=True, blank=True)
    location = models.CharField(max_length=500, blank=True)
    resume_verified = models.BooleanField(default=False)
    # Copied off the rented machine: a checkpoint only on the lot's disk ends with the lot.
    retrieved = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "id"]

    def __str__(self) -> str:
        return f"checkpoint of {self.run_id} at step {self.step}"


class RunArtifact(models.Model):
    """A file logged for a run (MLflow's artifacts), kept in Django's default storage.

    `sha256` and `size_bytes` are computed by the server while the upload streams in, so a
    deliverable can name the file by what was actually stored.
    """

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="artifacts")
    path = models.CharField(max_length=500, help_text="Relative to the run's artifact root.")
    size_bytes = models.BigIntegerField()
    sha256 = models.CharField(max_length=64)
    storage_name = models.CharField(max_length=1000, help_text="Name in the default storage.")
    content_type = models.CharField(max_length=200, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["path"]
        constraints = [
            models.UniqueConstraint(fields=["run", "path"], name="artifact_path_unique_in_run")
        ]

    def __str__(self) -> str:
        return f"{self.run_id}:{self.path}"
