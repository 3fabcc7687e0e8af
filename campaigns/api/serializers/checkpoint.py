"""A checkpoint a run reports (its components, size, timings, whether it was resumed and
retrieved), answered with the run's stop.
"""

from __future__ import annotations

from rest_framework import serializers

from campaigns.api.fields import (
    FiniteFloatField,
    StrictBooleanField,
    StrictIntegerField,
    StrictModelSerializer,
)
from campaigns.api.serializers.base import BIGINT_MAX
from campaigns.api.serializers.stop import RunStopFigures
from campaigns.domain import stop_rules
from campaigns.models import (
    Checkpoint,
)


class CheckpointSerializer(RunStopFigures, StrictModelSerializer[Checkpoint]):
    step = StrictIntegerField(min_value=0, max_value=BIGINT_MAX)
    components = serializers.ListField(
        child=serializers.ChoiceField(choices=stop_rules.COMPONENT_ORDER),
        help_text="What the checkpoint holds: " + ", ".join(stop_rules.COMPONENT_ORDER) + ".",
    )
    size_bytes = StrictIntegerField(
        min_value=0, max_value=BIGINT_MAX, required=False, allow_null=True
    )
    write_seconds = FiniteFloatField(required=False, allow_null=True, min_value=0)
    restore_seconds = FiniteFloatField(required=False, allow_null=True, min_value=0)
    resume_verified = StrictBooleanField(
        default=False, help_text="Reloaded and checked in a new process."
    )
    retrieved = StrictBooleanField(
        default=False,
        help_text="Copied off the rented machine (else it ends with the lot: an alert says so).",
    )
    stopped = serializers.SerializerMethodField()
    stop = serializers.SerializerMethodField()

    class Meta:
        model = Checkpoint
        fields = [
            "id",
            "step",
            "components",
            "size_bytes",
            "write_seconds",
            "restore_seconds",
            "location",
            "resume_verified",
            "retrieved",
            "created_at",
            "stopped",
            "stop",
        ]
        read_only_fields = ["id", "created_at"]

    def validate_components(self, value: list[str]) -> list[str]:
        return [c for c in stop_rules.COMPONENT_ORDER if c in set(value)]
