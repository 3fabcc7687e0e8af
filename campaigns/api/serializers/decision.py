"""A decision point: continue, cut items, or revise the question."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from campaigns.api.fields import (
    StrictCharField,
    StrictModelSerializer,
    StrictPrimaryKeyRelatedField,
)
from campaigns.api.serializers.base import scope
from campaigns.models import (
    DecisionPoint,
    Outcome,
    PlannedItem,
)


class DecisionSerializer(StrictModelSerializer[DecisionPoint]):
    outcome = serializers.ChoiceField(
        choices=[Outcome.CONTINUE, Outcome.CUT, Outcome.REVISE],
        help_text="continue, cut (optional variants) or revise (the question).",
    )
    rationale = StrictCharField()
    cut_variants = StrictPrimaryKeyRelatedField(
        many=True, required=False, queryset=PlannedItem.objects.none()
    )
    decided_by: serializers.SlugRelatedField[Any] = serializers.SlugRelatedField(
        slug_field="username", read_only=True, allow_null=True
    )

    class Meta:
        model = DecisionPoint
        fields = [
            "id",
            "label",
            "outcome",
            "rationale",
            "cut_variants",
            "decided_by",
            "decided_at",
            "created_at",
        ]
        read_only_fields = ["id", "decided_by", "decided_at", "created_at"]

    def get_fields(self) -> dict[str, Any]:
        fields = super().get_fields()
        campaign = self.context.get("campaign")
        if campaign is not None:
            # Only this campaign's items can be cut here; any other id is "does not exist".
            scope(fields["cut_variants"], PlannedItem.objects.filter(campaign=campaign))
        return fields
