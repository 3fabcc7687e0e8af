"""A stage of the calendar, with its one observed figure reconciled with its runs
(docs/domain.md §8.6); ``ObservedFigures`` is shared with the ledger's observed stage.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from campaigns.api.fields import (
    HoursField,
    IdentifierField,
    StrictModelSerializer,
    StrictPrimaryKeyRelatedField,
)
from campaigns.api.serializers.base import scope
from campaigns.domain.observed_hours import (
    FROM_RUNS,
    RECORDED,
    RECORDED_OVER_RUNS,
    Reconciled,
    StageObserved,
)
from campaigns.models import (
    PlannedItem,
    Stage,
)
from campaigns.models.field_lists import STAGE_PLAN_FIELDS
from campaigns.selectors.observed_hours import reconciled_for


# A stage's one observed figure, reconciled with its runs (docs/domain.md §8.6), as the stage
# serializers show it; `_seen` says where the reconciliation comes from. A comment, not a
# docstring: drf-spectacular would take it as the description of a serializer that has none.
class ObservedFigures:
    def _seen(self, stage: Stage) -> StageObserved | None:
        raise NotImplementedError

    @extend_schema_field(serializers.CharField(allow_null=True))
    def get_observed_hours(self, stage: Stage) -> str | None:
        seen = self._seen(stage)
        return None if seen is None or seen.hours is None else f"{seen.hours:.2f}"

    @extend_schema_field(
        serializers.ChoiceField(choices=[FROM_RUNS, RECORDED, RECORDED_OVER_RUNS], allow_null=True)
    )
    def get_observed_source(self, stage: Stage) -> str | None:
        seen = self._seen(stage)
        return None if seen is None else seen.source

    @extend_schema_field(serializers.CharField(allow_null=True))
    def get_runs_observed_hours(self, stage: Stage) -> str | None:
        seen = self._seen(stage)
        return None if seen is None or seen.runs_hours is None else f"{seen.runs_hours:.2f}"


class StageSerializer(ObservedFigures, StrictModelSerializer[Stage]):
    variant = StrictPrimaryKeyRelatedField(
        queryset=PlannedItem.objects.none(), required=False, allow_null=True
    )
    depends_on = StrictPrimaryKeyRelatedField(
        many=True, required=False, queryset=Stage.objects.none()
    )
    planned_hours = HoursField(required=False)
    resource = IdentifierField(
        max_length=60,
        required=False,
        allow_blank=True,
        help_text="Which GPU or lot it occupies, e.g. 'rtx4090-a'.",
    )

    # The stage's one observed figure, reconciled with its runs (docs/domain.md §8.6).
    observed_hours = serializers.SerializerMethodField()
    observed_source = serializers.SerializerMethodField()
    runs_observed_hours = serializers.SerializerMethodField()
    observed_reason = serializers.CharField(read_only=True)

    class Meta:
        model = Stage
        fields = [
            "id",
            *STAGE_PLAN_FIELDS,
            "observed_hours",
            "observed_source",
            "runs_observed_hours",
            "observed_reason",
            "deviation_note",
            "observed_at",
        ]
        read_only_fields = [
            "id",
            "observed_hours",
            "observed_source",
            "runs_observed_hours",
            "observed_reason",
            "deviation_note",
            "observed_at",
        ]

    def _seen(self, stage: Stage) -> StageObserved | None:
        # Reconciled once per campaign for a whole list (two queries), not once per stage.
        cache: dict[int, Reconciled] = self.context.setdefault("_observed", {})
        if stage.campaign_id not in cache:
            cache[stage.campaign_id] = reconciled_for([stage.campaign_id])[stage.campaign_id]
        return cache[stage.campaign_id].stages.get(stage.pk)

    def get_fields(self) -> dict[str, Any]:
        fields = super().get_fields()
        campaign = self.context.get("campaign")
        if campaign is not None:
            # Stages depend on stages of the same campaign and run its items, nothing else.
            scope(fields["variant"], PlannedItem.objects.filter(campaign=campaign))
            scope(fields["depends_on"], Stage.objects.filter(campaign=campaign))
        return fields
