"""A throughput sample a run reports, answered with the run's stop."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from campaigns.api.fields import (
    FiniteFloatField,
    StrictIntegerField,
    StrictModelSerializer,
)
from campaigns.api.serializers.base import INT_MAX
from campaigns.api.serializers.stop import RunStopFigures
from campaigns.models import (
    ThroughputSample,
)


class ThroughputSerializer(RunStopFigures, StrictModelSerializer[ThroughputSample]):
    samples_per_second = FiniteFloatField(required=False, allow_null=True, min_value=0)
    tokens_per_second = FiniteFloatField(required=False, allow_null=True, min_value=0)
    gpus = StrictIntegerField(min_value=1, max_value=INT_MAX, default=1)
    measured_seconds = FiniteFloatField(required=False, allow_null=True, min_value=0)
    stopped = serializers.SerializerMethodField()
    stop = serializers.SerializerMethodField()

    class Meta:
        model = ThroughputSample
        fields = [
            "id",
            "samples_per_second",
            "tokens_per_second",
            "gpus",
            "measured_seconds",
            "created_at",
            "stopped",
            "stop",
        ]
        read_only_fields = ["id", "created_at"]

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if attrs.get("samples_per_second") is None and attrs.get("tokens_per_second") is None:
            raise serializers.ValidationError(
                {"tokens_per_second": ["Give samples_per_second or tokens_per_second."]}
            )
        return attrs
