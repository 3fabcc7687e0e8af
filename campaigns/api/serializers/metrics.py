"""Metric points. They have no serializer on the hot path (see campaigns/services/ingest.py and
`RunMetrics` in campaigns/api/views.py): the ones named *Doc* only describe that endpoint in the
OpenAPI document; the others describe the answers that read the points back (names, series).
"""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from campaigns.api.fields import (
    IdentifierField,
    MetricValueField,
    StrictBooleanField,
    StrictIntegerField,
)
from campaigns.api.serializers.base import BIGINT_MAX
from campaigns.api.serializers.stop import StopInfoSerializer

MAX_POINTS = 10_000


class MetricPointDocSerializer(serializers.Serializer[Any]):
    name = IdentifierField(max_length=100)
    step = StrictIntegerField(min_value=0, max_value=BIGINT_MAX)
    value = MetricValueField(
        help_text="A number, or NaN / Infinity / -Infinity (bare JSON tokens or strings)."
    )


class MetricBatchDocSerializer(serializers.Serializer[Any]):
    points = serializers.ListField(child=MetricPointDocSerializer(), max_length=MAX_POINTS)


class MetricsAcceptedSerializer(serializers.Serializer[Any]):
    accepted = StrictIntegerField()
    stopped = StrictBooleanField()
    stop = StopInfoSerializer(allow_null=True)


class MetricNameCountSerializer(serializers.Serializer[Any]):
    name = serializers.CharField()
    count = serializers.IntegerField()


class MetricNamesSerializer(serializers.Serializer[Any]):
    """`GET /runs/{run_id}/metrics/` without `name`: what the run logged."""

    run_id = serializers.CharField()
    metrics = MetricNameCountSerializer(many=True)


class SeriesPointSerializer(serializers.Serializer[Any]):
    step = serializers.IntegerField()
    value = serializers.JSONField(help_text='A number, or "NaN", "Infinity", "-Infinity".')


class MetricSeriesSerializer(serializers.Serializer[Any]):
    """`GET /runs/{run_id}/metrics/?name=…`: the series, downsampled
    (campaigns/domain/downsampling.py)."""

    run_id = serializers.CharField()
    name = serializers.CharField()
    count = serializers.IntegerField(help_text="Points stored for this metric (all of them).")
    returned = serializers.IntegerField(help_text="Points in `points` (at most `max_points`).")
    max_points = serializers.IntegerField()
    points = SeriesPointSerializer(many=True)
