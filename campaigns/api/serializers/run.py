"""A run: the client-chosen run id, its creation, what it shows (detail: latest figures,
artifacts, cost so far, MLflow tags and segments), and its finish.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

from django.utils import timezone
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from campaigns.api.fields import (
    HoursField,
    JSONObjectField,
    MetricValueField,
    StrictCharField,
    StrictIntegerField,
    StrictModelSerializer,
    StrictPrimaryKeyRelatedField,
    StrictRegexField,
    json_metric_value,
)
from campaigns.api.serializers.base import INT_MAX, scope
from campaigns.api.serializers.checkpoint import CheckpointSerializer
from campaigns.api.serializers.stop import RunStopFigures
from campaigns.api.serializers.throughput import ThroughputSerializer
from campaigns.domain import run_hours
from campaigns.models import (
    Campaign,
    ItemStatus,
    PlannedItem,
    Run,
    RunArtifact,
    RunHoursCorrection,
    RunKind,
    RunSegment,
)
from campaigns.selectors import run_cost, run_metrics

RUN_ID_PATTERN = r"[A-Za-z0-9][A-Za-z0-9._:+=@~-]{0,199}"


def run_id_is_valid(run_id: str) -> bool:
    return re.fullmatch(RUN_ID_PATTERN, run_id) is not None


class RunCreateSerializer(serializers.Serializer[Any]):
    run_id = StrictRegexField(
        f"^{RUN_ID_PATTERN}$",
        max_length=200,
        trim_whitespace=False,  # "run\n" is refused, not quietly made "run"
        help_text="Chosen by the client, unique within the team: letters, digits and ._:+=@~-",
        error_messages={
            "invalid": "Use letters, digits and . _ : + = @ ~ - (it goes in URLs), "
            "starting with a letter or digit."
        },
    )
    variant = StrictPrimaryKeyRelatedField(
        queryset=PlannedItem.objects.none(), required=False, allow_null=True
    )
    kind = serializers.ChoiceField(choices=RunKind.choices, default=RunKind.FULL)
    gpus = StrictIntegerField(
        min_value=1,
        max_value=INT_MAX,
        default=1,
        help_text="GPUs the run occupies: its cost is its hours × GPUs × the campaign's rate.",
    )
    config = JSONObjectField(required=False, default=dict)
    started_at = serializers.DateTimeField(
        required=False,
        help_text="When the run began, on the client's clock (ISO 8601 with its offset); "
        "default: now. Not before the plan's commit; at most 5 minutes ahead of the server.",
    )
    heartbeat_seconds = StrictIntegerField(
        min_value=1,
        max_value=86_400,
        required=False,
        help_text="How often the client sends a heartbeat: the run is ended as silent after "
        "a multiple of it (docs/domain.md §5.8).",
    )

    def get_fields(self) -> dict[str, Any]:
        fields = super().get_fields()
        campaign = self.context.get("campaign")
        if campaign is not None:
            scope(fields["variant"], PlannedItem.objects.filter(campaign=campaign))
        return fields

    def validate_run_id(self, value: str) -> str:
        # RegexField searches; "$" would still let a trailing newline through.
        if not run_id_is_valid(value):
            raise serializers.ValidationError(self.fields["run_id"].error_messages["invalid"])
        return value

    def validate_started_at(self, value: datetime) -> datetime:
        campaign = self.context.get("campaign")
        not_before = getattr(campaign, "committed_at", None) or datetime.min.replace(tzinfo=UTC)
        try:
            return run_hours.checked_moment(
                value, now=timezone.now(), not_before=not_before, name="started_at"
            )
        except ValueError as exc:
            raise serializers.ValidationError(f"{exc} (the plan's commit).") from exc

    def validate_variant(self, item: PlannedItem | None) -> PlannedItem | None:
        if item is not None and item.status == ItemStatus.CUT:
            raise serializers.ValidationError(f"'{item.name}' was cut by a decision.")
        return item


class RunSerializer(RunStopFigures, StrictModelSerializer[Run]):
    campaign: serializers.PrimaryKeyRelatedField[Campaign] = StrictPrimaryKeyRelatedField(
        read_only=True
    )
    variant: serializers.PrimaryKeyRelatedField[PlannedItem] = StrictPrimaryKeyRelatedField(
        read_only=True, allow_null=True
    )
    stopped = serializers.SerializerMethodField()
    stop = serializers.SerializerMethodField()
    hours_source = serializers.SerializerMethodField()

    class Meta:
        model = Run
        fields = [
            "run_id",
            "campaign",
            "variant",
            "kind",
            "gpus",
            "config",
            "status",
            "stopped",
            "stop",
            "observed_hours",
            "observed_reason",
            "measured_hours",
            "hours_source",
            "last_step",
            "created_at",
            "started_at",
            "heartbeat_at",
            "heartbeat_seconds",
            "ended_at",
            "finished_at",
        ]
        read_only_fields = fields

    def _run(self, run: Run) -> Run:
        return run

    @extend_schema_field(
        serializers.ChoiceField(choices=["measured", "stated", "corrected"], allow_null=True)
    )
    def get_hours_source(self, run: Run) -> str | None:
        """Where `observed_hours` come from: the run's own clock (`measured`), the hours its
        finish stated, or a person's correction (`observed_reason` says why); null while it
        runs."""
        return run_hours.source(
            observed_hours=run.observed_hours,
            measured=run.measured_hours,
            reason=run.observed_reason,
        )


class LatestMetricSerializer(serializers.Serializer[Any]):
    step = StrictIntegerField()
    value = MetricValueField()


class LatestFiguresSerializer(serializers.Serializer[Any]):
    metrics = serializers.DictField(child=LatestMetricSerializer())
    throughput = ThroughputSerializer(allow_null=True)
    checkpoint = CheckpointSerializer(allow_null=True)
    points = StrictIntegerField()


class RunArtifactSerializer(StrictModelSerializer[RunArtifact]):
    class Meta:
        model = RunArtifact
        fields = ["path", "size_bytes", "sha256", "created_at"]
        read_only_fields = fields


class CostSoFarSerializer(serializers.Serializer[Any]):
    amount = serializers.CharField(help_text="Decimal string in the campaign's currency.")
    currency = serializers.CharField()
    basis = serializers.ChoiceField(
        choices=["lot_share", "hourly"],
        help_text="lot_share: a share of the lots the ledger holds (never a second charge); "
        "hourly: GPU-hours × the campaign's hourly rate.",
    )


class RunSegmentSerializer(StrictModelSerializer[RunSegment]):
    """An ended stretch of a resumed run, with its own hours (docs/mlflow.md)."""

    class Meta:
        model = RunSegment
        fields = ["number", "started_at", "ended_at", "status", "hours", "last_step"]
        read_only_fields = fields


class RunHoursCorrectionSerializer(StrictModelSerializer[RunHoursCorrection]):
    """A person's correction of the run's hours: before, after, who, when and why."""

    made_by: serializers.SlugRelatedField[Any] = serializers.SlugRelatedField(
        slug_field="username", read_only=True
    )

    class Meta:
        model = RunHoursCorrection
        fields = ["before", "after", "reason", "made_by", "made_at"]
        read_only_fields = fields


class RunDetailSerializer(RunSerializer):
    latest = serializers.SerializerMethodField()
    # Files logged for the run (MLflow artifacts), with the server's own size and sha256.
    artifacts = RunArtifactSerializer(many=True, read_only=True)
    cost_so_far = serializers.SerializerMethodField()
    # What an MLflow client set: its display name, tags and dataset inputs; a resumed run's
    # earlier segments.
    tags = serializers.DictField(child=serializers.CharField(), read_only=True)
    inputs = serializers.ListField(child=serializers.DictField(), read_only=True)
    segments = RunSegmentSerializer(many=True, read_only=True)
    hours_corrections = RunHoursCorrectionSerializer(many=True, read_only=True)

    class Meta(RunSerializer.Meta):
        fields = [
            *RunSerializer.Meta.fields,
            "run_name",
            "tags",
            "inputs",
            "segments",
            "hours_corrections",
            "deleted_at",
            "latest",
            "artifacts",
            "cost_so_far",
        ]
        read_only_fields = fields

    @extend_schema_field(CostSoFarSerializer(allow_null=True))
    def get_cost_so_far(self, run: Run) -> dict[str, Any] | None:
        """Null when the campaign has neither lots nor an hourly rate (docs/domain.md §18)."""
        return run_cost.cost_so_far(run)

    @extend_schema_field(LatestFiguresSerializer)
    def get_latest(self, run: Run) -> dict[str, Any]:
        """The last value of each metric (by step), the last throughput and checkpoint."""
        # From the run's metric summaries (docs/metric_store.md §1), not its points.
        latest, count = run_metrics.latest_points(run)
        metrics: dict[str, Any] = {
            name: {"step": step, "value": json_metric_value(value)}
            for name, (step, value) in latest.items()
        }
        throughput = run.throughputs.order_by("-created_at", "-id").first()
        checkpoint = run.checkpoints.order_by("-step", "-id").first()
        return {
            "metrics": metrics,
            "throughput": ThroughputSerializer(throughput).data if throughput else None,
            "checkpoint": CheckpointSerializer(checkpoint).data if checkpoint else None,
            "points": count,
        }


class FinishRunSerializer(serializers.Serializer[Any]):
    status = serializers.ChoiceField(choices=["completed", "failed"])
    observed_hours = HoursField(
        required=False,
        allow_null=True,
        help_text="Hours the run took, when the client states them (kept as stated); left "
        "out, the run's hours are measured: ended_at − its start, earlier segments added, "
        "rounded half-up to 0.01 h.",
    )
    ended_at = serializers.DateTimeField(
        required=False,
        help_text="When the run ended, on the client's clock (ISO 8601 with its offset); "
        "default: now. Not before this stretch's start; at most 5 minutes ahead of the server.",
    )


class HeartbeatSerializer(serializers.Serializer[Any]):
    gpus = StrictIntegerField(
        min_value=1,
        max_value=INT_MAX,
        required=False,
        help_text="GPUs the loop runs on: the run's own count (another is a 400).",
    )


class HeartbeatAnswerSerializer(RunStopFigures, StrictModelSerializer[Run]):
    stopped = serializers.SerializerMethodField()
    stop = serializers.SerializerMethodField()

    class Meta:
        model = Run
        fields = ["run_id", "status", "stopped", "stop", "heartbeat_at", "gpus"]
        read_only_fields = fields

    def _run(self, run: Run) -> Run:
        return run


class CorrectHoursSerializer(serializers.Serializer[Any]):
    observed_hours = HoursField(help_text="The run's hours as they should count.")
    observed_reason = StrictCharField(
        max_length=2000,
        help_text="Why the run's hours are not what it recorded (kept with the correction).",
    )
