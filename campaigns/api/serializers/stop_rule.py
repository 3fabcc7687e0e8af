"""A stop rule of the campaign (docs/domain.md §4)."""

from __future__ import annotations

from campaigns.api.fields import (
    FiniteFloatField,
    IdentifierField,
    StrictModelSerializer,
)
from campaigns.models import (
    StopRule,
)


class StopRuleSerializer(StrictModelSerializer[StopRule]):
    threshold = FiniteFloatField(required=False, allow_null=True)
    metric = IdentifierField(max_length=100, required=False, allow_blank=True)

    class Meta:
        model = StopRule
        fields = [
            "id",
            "kind",
            "metric",
            "comparator",
            "threshold",
            "description",
            "grace_steps",
            "grace_minutes",
            "for_minutes",
            "created_at",
        ]
        read_only_fields = ["id", "created_at"]
