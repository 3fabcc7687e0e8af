"""Plan editing after the first save (docs/api.md): amend or remove an item, change or remove a
stage, a stop rule or a lot, reserve lots, revoke an ingest key. Each view calls the service the
admin calls (`amend_item`, `remove_item`, `change_stage`, `remove_stage`, `change_stop_rule`,
`remove_stop_rule`, `reserve_lot`, `change_lot`, `release_lot`, `revoke_ingest_keys`), so the two
refuse the same things:

- stages, stop rules and lots change only while drafting: after commit (or close) 409;
- after commit an item changes only as an amendment with `amendment_reason` (400 naming it);
  a committed item is never deleted (409: cut it with a decision); a closed campaign takes no
  change (409).

Tenancy as everywhere: another team's campaign or object is 404, viewers get 403, an ingest key
reaches none of these.
"""

from __future__ import annotations

from typing import Any

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema, extend_schema_field
from rest_framework import exceptions, generics, serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from campaigns.api.authentication import is_ingest
from campaigns.api.fields import StrictModelSerializer, StrictPrimaryKeyRelatedField
from campaigns.api.ingest_keys import _is_owner
from campaigns.api.permissions import campaign_for
from campaigns.api.serializers import PlannedItemSerializer, StageSerializer, StopRuleSerializer
from campaigns.api.views import CampaignChild
from campaigns.models import IngestKey, LotReservation, PlannedItem, Stage, StopRule
from campaigns.services.campaigns import real_user
from campaigns.services.items import amend_item, remove_item
from campaigns.services.keys import revoke_ingest_keys
from campaigns.services.lots import change_lot, release_lot, reserve_lot
from campaigns.services.plans import check_draft
from campaigns.services.stages import change_stage, remove_stage
from campaigns.services.stop_rules import change_stop_rule, remove_stop_rule
from catalog.models import RentalPlan

_DETAIL_METHODS = ["get", "patch", "delete", "head", "options"]


class _PlanRow(CampaignChild):
    """A row of the campaign's plan, looked up in the campaign (another campaign's id: 404)."""

    # What check_draft calls the rows in its refusal ("stop rules are frozen once …").
    what = ""

    def _fake(self) -> bool:
        return bool(getattr(self, "swagger_fake_view", False))

    def update(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        # The state conflict (409) comes before the body's shape (400), as on the lists.
        check_draft(self.get_campaign(), self.what)
        return super().update(request, *args, **kwargs)  # type: ignore[misc,no-any-return]


class VariantDetail(CampaignChild, generics.RetrieveUpdateDestroyAPIView[PlannedItem]):
    """A planned item. PATCH while drafting edits it; after commit it is an amendment and needs
    `amendment_reason` (400 naming it); the role is never changed. DELETE removes a draft's item
    (409 after commit: cut it with a decision)."""

    serializer_class = PlannedItemSerializer
    lookup_url_kwarg = "item"
    http_method_names = _DETAIL_METHODS

    def get_queryset(self) -> Any:
        if getattr(self, "swagger_fake_view", False):
            return PlannedItem.objects.none()
        return PlannedItem.objects.filter(campaign=self.get_campaign())

    def perform_update(self, serializer: Any) -> None:
        data = dict(serializer.validated_data)
        reason = data.pop("amendment_reason", "")
        amend_item(
            item=serializer.instance,
            acting_user=real_user(self.request.user),
            reason=reason,
            **data,
        )
        serializer.instance = self.get_queryset().get(pk=serializer.instance.pk)

    def perform_destroy(self, instance: PlannedItem) -> None:
        remove_item(item=instance, acting_user=real_user(self.request.user))


class StageDetail(_PlanRow, generics.RetrieveUpdateDestroyAPIView[Stage]):
    """A calendar stage of the draft plan: change or remove it; 409 once committed."""

    serializer_class = StageSerializer
    lookup_url_kwarg = "sid"
    http_method_names = _DETAIL_METHODS
    what = "calendar stages"

    def get_queryset(self) -> Any:
        if self._fake():
            return Stage.objects.none()
        return Stage.objects.filter(campaign=self.get_campaign()).prefetch_related("depends_on")

    def perform_update(self, serializer: Any) -> None:
        data = dict(serializer.validated_data)
        depends_on = data.pop("depends_on", None)
        serializer.instance = change_stage(
            stage=serializer.instance,
            acting_user=real_user(self.request.user),
            depends_on=None if depends_on is None else list(depends_on),
            **data,
        )

    def perform_destroy(self, instance: Stage) -> None:
        remove_stage(stage=instance, acting_user=real_user(self.request.user))


class StopRuleDetail(_PlanRow, generics.RetrieveUpdateDestroyAPIView[StopRule]):
    """A stop rule of the draft plan: change or remove it; 409 once committed."""

    serializer_class = StopRuleSerializer
    lookup_url_kwarg = "rid"
    http_method_names = _DETAIL_METHODS
    what = "stop rules"

    def get_queryset(self) -> Any:
        if self._fake():
            return StopRule.objects.none()
        return StopRule.objects.filter(campaign=self.get_campaign())

    def perform_update(self, serializer: Any) -> None:
        serializer.instance = change_stop_rule(
            rule=serializer.instance,
            acting_user=real_user(self.request.user),
            **serializer.validated_data,
        )

    def perform_destroy(self, instance: StopRule) -> None:
        remove_stop_rule(rule=instance, acting_user=real_user(self.request.user))


# --- Lots ----------------------------------------------------------------------------------


class LotSerializer(StrictModelSerializer[LotReservation]):
    plan = StrictPrimaryKeyRelatedField(
        queryset=RentalPlan.objects.all(), help_text="A rental plan (GET /api/v1/estimates/plans/)."
    )
    quantity = serializers.IntegerField(min_value=1, max_value=100_000, required=False)
    total_price = serializers.SerializerMethodField(
        help_text="The plan's price × quantity, a decimal string (lots are priced per lot)."
    )
    currency = serializers.SerializerMethodField(help_text="The plan's currency.")

    class Meta:
        model = LotReservation
        fields = ["id", "plan", "quantity", "start", "total_price", "currency"]
        read_only_fields = ["id", "total_price", "currency"]

    @extend_schema_field(serializers.CharField())
    def get_total_price(self, lot: LotReservation) -> str:
        return str(lot.total_price)

    @extend_schema_field(serializers.CharField())
    def get_currency(self, lot: LotReservation) -> str:
        return str(lot.plan.currency)


class CampaignLots(CampaignChild, generics.ListCreateAPIView[LotReservation]):
    """Reserved rental lots of the plan; reserved while drafting (409 once committed: commit
    posts them to the ledger)."""

    serializer_class = LotSerializer

    def get_queryset(self) -> Any:
        if getattr(self, "swagger_fake_view", False):
            return LotReservation.objects.none()
        return LotReservation.objects.filter(campaign=self.get_campaign()).select_related("plan")

    def create(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        check_draft(self.get_campaign(), "reserved lots")
        return super().create(request, *args, **kwargs)

    def perform_create(self, serializer: Any) -> None:
        serializer.instance = reserve_lot(
            campaign=self.get_campaign(),
            acting_user=real_user(self.request.user),
            **serializer.validated_data,
        )


class LotDetail(_PlanRow, generics.RetrieveUpdateDestroyAPIView[LotReservation]):
    """A reserved lot of the draft plan: change or release it; 409 once committed."""

    serializer_class = LotSerializer
    lookup_url_kwarg = "lid"
    http_method_names = _DETAIL_METHODS
    what = "reserved lots"

    def get_queryset(self) -> Any:
        if self._fake():
            return LotReservation.objects.none()
        return LotReservation.objects.filter(campaign=self.get_campaign()).select_related("plan")

    def perform_update(self, serializer: Any) -> None:
        serializer.instance = change_lot(
            lot=serializer.instance,
            acting_user=real_user(self.request.user),
            **serializer.validated_data,
        )

    def perform_destroy(self, instance: LotReservation) -> None:
        release_lot(lot=instance, acting_user=real_user(self.request.user))


# --- Ingest keys ---------------------------------------------------------------------------


class IngestKeyDetail(APIView):
    """Revoke one ingest key of this campaign (owners only): loops using it get 401 from now
    on. Revoking a revoked key changes nothing (204 again)."""

    @extend_schema(request=None, responses={204: None})
    def delete(self, request: Request, id: int, key: int) -> Response:
        campaign = campaign_for(request, id)  # another team's campaign: 404
        if is_ingest(request.user) or not _is_owner(request.user, campaign.team_id):
            raise exceptions.PermissionDenied("Only the team's owners revoke ingest keys.")
        found = get_object_or_404(IngestKey.objects.filter(campaign=campaign), pk=key)
        revoke_ingest_keys(campaign=campaign, acting_user=real_user(request.user), keys=[found])
        return Response(status=204)
