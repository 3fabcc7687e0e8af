"""The campaign timeline's answer (GET /campaigns/{id}/timeline/, docs/api.md): its schema.
Hours are decimal strings to the hundredth."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from campaigns.api.fields import StrictBooleanField, StrictCharField, StrictIntegerField


def _hours(help_text: str = "", *, null: bool = False) -> serializers.CharField:
    return StrictCharField(allow_null=null, help_text=help_text or "Hours, a decimal string.")


class TimelineStageSerializer(serializers.Serializer[Any]):
    id = StrictIntegerField(
        help_text="The stage's id (negative: an item of a plan without stages)."
    )
    name = StrictCharField()
    kind = StrictCharField()
    item = StrictCharField(allow_null=True)
    item_id = StrictIntegerField(allow_null=True)
    gpu = StrictCharField(allow_blank=True)
    machine = StrictBooleanField()
    resource = StrictCharField(allow_blank=True)
    state = StrictCharField(help_text="planned, running, done or cut.")
    planned_hours = _hours("As committed; null when added after commit.", null=True)
    planned_start = _hours(null=True)
    planned_end = _hours(null=True)
    observed_hours = _hours("Each machine-hour once: typed or the runs', never both.", null=True)
    observed_source = StrictCharField(
        allow_null=True, help_text="typed (a person's figure stands) or runs; null: nothing yet."
    )
    runs_observed_hours = _hours("The runs' figure, shown beside a typed one.", null=True)
    observed_reason = StrictCharField(allow_blank=True)
    running_runs = StrictIntegerField()
    forecast_hours = _hours("Its length in the current calendar.")
    forecast_start = _hours()
    forecast_end = _hours()
    basis = StrictCharField(
        help_text="observed, running, forecast, calibrated (the team's median for a stage tied to "
        "no item), planned or cut."
    )
    critical = StrictBooleanField()


class TimelineLotSerializer(serializers.Serializer[Any]):
    label = StrictCharField()  # type: ignore[assignment]
    gpu = StrictCharField(allow_blank=True)
    start_hours = _hours()
    end_hours = _hours()
    starts_at = serializers.DateTimeField(allow_null=True)
    ends_at = serializers.DateTimeField(allow_null=True)
    covers = StrictBooleanField(help_text="The lots end after the calendar's machine time.")


class TimelineWarningSerializer(serializers.Serializer[Any]):
    code = StrictCharField()
    message = StrictCharField()
    item = StrictIntegerField(allow_null=True)
    stage = StrictIntegerField(allow_null=True)


class TimelineToBuySerializer(serializers.Serializer[Any]):
    hours = _hours("Machine time past the last reserved lot; null without lots.", null=True)
    currency = StrictCharField(allow_null=True)
    advised = serializers.ListField(child=serializers.DictField())
    advised_total = StrictCharField(allow_null=True)
    cut_options = serializers.ListField(child=serializers.DictField())
    explanation = serializers.ListField(child=StrictCharField())


class TimelineSerializer(serializers.Serializer[Any]):
    campaign = StrictIntegerField()
    window_hours = _hours()
    committed = StrictBooleanField()
    headline = StrictCharField()
    planned_hours = _hours("The calendar as committed (a draft: as planned).")
    observed_hours = _hours("Null until anything was observed.", null=True)
    forecast_hours = _hours("The current calendar: observed where it happened, forecast else.")
    slack_hours = _hours("Window minus the current calendar; negative: over the window.")
    over_hours = _hours()
    fits_in_window = StrictBooleanField()
    machine_hours = _hours()
    machine_end_hours = _hours()
    critical_path = serializers.ListField(child=StrictIntegerField())
    lots = TimelineLotSerializer(many=True)
    lots_end_hours = _hours(null=True)
    to_buy = TimelineToBuySerializer()
    stages = TimelineStageSerializer(many=True)
    unattributed_runs = serializers.DictField()
    figures = serializers.DictField()
    forecast_figures = serializers.DictField()
    warnings = TimelineWarningSerializer(many=True)
    problem = StrictCharField(allow_blank=True)
