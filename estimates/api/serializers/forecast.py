"""The campaign forecast's answer (GET /campaigns/{id}/forecast/)."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from campaigns.api.fields import (
    StrictBooleanField,
    StrictCharField,
    StrictFloatField,
    StrictIntegerField,
)


class ForecastItemSerializer(serializers.Serializer[Any]):
    id = StrictIntegerField()
    name = StrictCharField()
    tier = StrictCharField()
    role = StrictCharField()
    status = StrictCharField(help_text="The item's status: planned, done, cut, stopped.")
    gpu = StrictCharField(allow_blank=True)
    planned_hours = StrictFloatField()
    reserved_hours = StrictFloatField(
        allow_null=True, help_text="From the frozen baseline; null when added after commit."
    )
    forecast_hours = StrictFloatField()
    observed_hours = StrictFloatField(allow_null=True)
    time_source = StrictCharField(help_text='"assumed", "pilot" or "observed".')
    note = StrictCharField()


class ForecastTotalsSerializer(serializers.Serializer[Any]):
    reserved_hours = StrictFloatField()
    forecast_hours = StrictFloatField()
    observed_hours = StrictFloatField()


class ForecastFiguresSerializer(serializers.Serializer[Any]):
    """The plan figures' names (docs/domain.md §8.5) with the forecast hours."""

    work_hours = StrictFloatField(help_text="Forecast machine hours of the items not cut.")
    gpu_hours = StrictFloatField(help_text="Each item's forecast work hours × its GPUs.")
    calendar_hours = StrictFloatField(help_text="The forecast calendar, first stage to last.")
    machine_hours = StrictFloatField(
        help_text="What the lots must hold: the calendar's machine stages, the items' and those "
        "tied to no item."
    )
    untied_machine_hours = StrictFloatField(
        help_text="Of the machine time, the stages tied to no item (setup, retrieval)."
    )


class ForecastSerializer(serializers.Serializer[Any]):
    campaign = StrictIntegerField()
    status = StrictCharField(help_text='"fresh", "stale" (recompute queued) or "failed".')
    stale = StrictBooleanField()
    stale_since = serializers.DateTimeField(allow_null=True)
    computed_at = serializers.DateTimeField(allow_null=True)
    input_version = StrictIntegerField()
    computed_version = StrictIntegerField(allow_null=True)
    error = StrictCharField(allow_blank=True)
    time_source = StrictCharField(
        help_text='"pilot" once a measured pilot drives an item\'s forecast, else "assumed".'
    )
    window_hours = StrictFloatField()
    reserved_basis = StrictCharField(
        help_text='"baseline" (frozen at commit) or "plan" (draft, as it stands).'
    )
    reserved_hours = StrictFloatField()
    forecast_hours = StrictFloatField()
    observed_hours = StrictFloatField()
    fits_in_window = StrictBooleanField()
    uncommitted_hours = StrictFloatField()
    over_hours = StrictFloatField()
    totals = ForecastTotalsSerializer()
    items = ForecastItemSerializer(many=True)
    advice = serializers.ListField(child=StrictCharField())
    lots = serializers.DictField()
    figures = ForecastFiguresSerializer(required=False)
