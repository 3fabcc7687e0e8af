"""A planned item (the API's *variant*): its work fields, estimate spec, status and fate."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from campaigns.api import estimate_spec
from campaigns.api.fields import (
    FiniteFloatField,
    HoursField,
    JSONObjectField,
    StrictCharField,
    StrictModelSerializer,
)
from campaigns.domain import item_fate as fates
from campaigns.models import (
    WORK_FIELDS,
    PlannedItem,
)
from campaigns.selectors import run_metrics as readings


class PlannedItemSerializer(StrictModelSerializer[PlannedItem]):
    config = JSONObjectField(required=False)
    estimate_spec = JSONObjectField(
        required=False,
        allow_null=True,
        help_text="The preview's model, training and hardware objects (POST /estimates/preview/"
        "), checked by the same serializers; the forecast and the hardware options use it.",
    )
    epochs = FiniteFloatField(required=False, allow_null=True, min_value=0.001, max_value=1e6)
    assumed_tokens_per_second = FiniteFloatField(
        required=False, allow_null=True, min_value=0.001, max_value=1e12
    )
    assumed_samples_per_second = FiniteFloatField(
        required=False, allow_null=True, min_value=0.001, max_value=1e12
    )
    planned_hours = HoursField(required=False)
    prep_hours = HoursField(required=False)
    amendment_reason = StrictCharField(
        write_only=True,
        required=False,
        allow_blank=True,
        help_text="Required once the plan is committed: why this item is added.",
    )
    status = serializers.SerializerMethodField(
        help_text="planned, done, cut or stopped: from the fate (campaigns/domain/item_fate.py)."
    )
    fate = serializers.SerializerMethodField(
        help_text="done, cut, stopped, running, failed or planned, from the item's full runs "
        "(pilots do not settle an item); the closing report says the same."
    )

    class Meta:
        model = PlannedItem
        fields = [
            "id",
            "name",
            "role",
            "tier",
            "config",
            "planned_hours",
            "prep_hours",
            "rationale",
            "gpu",
            *WORK_FIELDS,
            "estimate_spec",
            "status",
            "fate",
            "amendment_reason",
        ]
        read_only_fields = ["id", "status", "fate"]

    def validate_estimate_spec(self, value: dict[str, Any] | None) -> dict[str, Any] | None:
        return estimate_spec.validate(value)

    @extend_schema_field(serializers.ChoiceField(choices=["planned", "done", "cut", "stopped"]))
    def get_status(self, item: PlannedItem) -> str:
        return fates.status_of(readings.fate_of(item))

    @extend_schema_field(serializers.ChoiceField(choices=list(fates.FATES)))
    def get_fate(self, item: PlannedItem) -> str:
        return readings.fate_of(item)
