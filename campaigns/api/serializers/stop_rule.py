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
from campaigns.models.field_lists import STOP_RULE_FIELDS


class StopRuleSerializer(StrictModelSerializer[StopRule]):
    threshold = FiniteFloatField(required=False, allow_null=True)
    metric = IdentifierField(max_length=100, required=False, allow_blank=True)

    class Meta:
        model = StopRule
        fields = ["id", *STOP_RULE_FIELDS, "created_at"]
        read_only_fields = ["id", "created_at"]
