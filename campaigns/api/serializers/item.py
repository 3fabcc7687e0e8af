"""A planned item (the API's *variant*): its work fields, estimate spec, status, fate and what
verified it (docs/domain.md §5.5)."""

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
from campaigns.selectors.item_fates import item_fates


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
        help_text="done, cut, stopped, running, failed or planned, from the facts: its full runs "
        "(pilots do not settle an item) and its stages on the timeline (all its work stages "
        "done: done). Accepted deliverables are not read here: an item only a deliverable "
        "verified is planned here and done in the closing report (docs/domain.md §5.5)."
    )
    verified_by = serializers.SerializerMethodField(
        help_text="What shows a done item done, in words: completed full runs, each work "
        "stage's figure and its source (typed, or its runs). Empty unless done."
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
            "verified_by",
            "amendment_reason",
        ]
        read_only_fields = ["id", "status", "fate", "verified_by"]

    def validate_estimate_spec(self, value: dict[str, Any] | None) -> dict[str, Any] | None:
        return estimate_spec.validate(value)

    def _fate(self, item: PlannedItem) -> fates.ItemFate:
        # Read once per campaign for a whole list (campaigns/selectors/item_fates.py).
        cache: dict[int, dict[int, fates.ItemFate]] = self.context.setdefault("_fates", {})
        if item.campaign_id not in cache:
            campaign = self.context.get("campaign")
            if campaign is None or campaign.pk != item.campaign_id:
                campaign = item.campaign
            cache[item.campaign_id] = item_fates(campaign)
        found = cache[item.campaign_id].get(item.pk)
        if found is None:  # an item created after the cache was read (a create's answer)
            cache[item.campaign_id] = item_fates(item.campaign)
            found = cache[item.campaign_id][item.pk]
        return found

    @extend_schema_field(serializers.ChoiceField(choices=["planned", "done", "cut", "stopped"]))
    def get_status(self, item: PlannedItem) -> str:
        return fates.status_of(self._fate(item).fate)

    @extend_schema_field(serializers.ChoiceField(choices=list(fates.FATES)))
    def get_fate(self, item: PlannedItem) -> str:
        return self._fate(item).fate

    @extend_schema_field(serializers.ListField(child=serializers.CharField()))
    def get_verified_by(self, item: PlannedItem) -> list[str]:
        return list(self._fate(item).verified_by)
