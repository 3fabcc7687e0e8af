"""`POST /api/v1/campaigns/{id}/ingest-keys/`: owners mint an ingest key, optionally bound to one
planned item and a run kind (docs/api.md, docs/mlflow.md). The key is shown once, in the 201:
a replay of the request (same Idempotency-Key) answers the key's id and prefix with `key: null`
and `key_shown_once: true`, never the key (docs/domain.md §26).

Kept apart from campaigns/api/views.py: a key is a credential, and only the team's owners issue one
(planners and viewers get 403, another team's campaign is 404 as everywhere).
"""

from __future__ import annotations

from typing import Any

import orjson
from drf_spectacular.utils import extend_schema
from rest_framework import exceptions, serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from campaigns.api.authentication import is_ingest
from campaigns.api.fields import (
    StrictCharField,
    StrictModelSerializer,
    StrictPrimaryKeyRelatedField,
)
from campaigns.api.idempotency import store_instead
from campaigns.api.permissions import campaign_for
from campaigns.models import IngestKey, Membership, PlannedItem, Role, RunKind
from campaigns.services.campaigns import real_user
from campaigns.services.keys import issue_ingest_key


class IngestKeyCreateSerializer(serializers.Serializer[Any]):
    name = StrictCharField(max_length=100, required=False, default="training loop")
    # Scoped to the campaign in get_fields: another campaign's (or team's) item reads as a
    # missing one, with the same words (no hint it exists).
    item = StrictPrimaryKeyRelatedField(
        queryset=PlannedItem.objects.none(),
        required=False,
        allow_null=True,
        help_text="A planned item of this campaign: runs opened with the key default to it.",
    )
    kind = serializers.ChoiceField(
        choices=RunKind.choices,
        required=False,
        allow_blank=True,
        default="",
        help_text="The run kind the key's runs default to (blank: pilot).",
    )

    def get_fields(self) -> dict[str, Any]:
        fields = super().get_fields()
        campaign = self.context.get("campaign")
        if campaign is not None:
            item: Any = fields["item"]
            item.queryset = PlannedItem.objects.filter(campaign=campaign)
        return fields


class IngestKeyIssuedSerializer(StrictModelSerializer[IngestKey]):
    key = serializers.SerializerMethodField(help_text="The key itself: shown this once only.")
    # Blank when the key is not bound to a kind, which RunKind's enum does not list.
    kind = StrictCharField(
        read_only=True, help_text="pilot, full or inference; blank when not bound."
    )

    class Meta:
        model = IngestKey
        fields = ["id", "campaign", "name", "prefix", "item", "kind", "created_at", "key"]
        read_only_fields = fields

    def get_key(self, obj: IngestKey) -> str:
        return str(self.context["raw"])


def _is_owner(user: Any, team_id: int) -> bool:
    return Membership.objects.has_role(user, team_id, {Role.OWNER})


class CampaignIngestKeys(APIView):
    """Issue an ingest key for this campaign (owners only); `item` and `kind` bind it."""

    @extend_schema(request=IngestKeyCreateSerializer, responses={201: IngestKeyIssuedSerializer})
    def post(self, request: Request, id: int) -> Response:
        campaign = campaign_for(request, id)  # another team's campaign: 404
        if is_ingest(request.user) or not _is_owner(request.user, campaign.team_id):
            raise exceptions.PermissionDenied("Only the team's owners issue ingest keys.")
        serializer = IngestKeyCreateSerializer(data=request.data, context={"campaign": campaign})
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        # services checks that the item is this campaign's (400 naming `item` otherwise).
        key, raw = issue_ingest_key(
            campaign=campaign,
            acting_user=real_user(request.user),
            name=data["name"],
            item=data.get("item"),
            kind=data.get("kind") or "",
        )
        body = IngestKeyIssuedSerializer(key, context={"raw": raw}).data
        response = Response(body, status=201)
        # What a replay answers: the same key's id and prefix, never the key itself.
        kept = {**body, "key": None, "key_shown_once": True}
        return store_instead(response, orjson.dumps(kept))


class KeyItemSerializer(StrictModelSerializer[PlannedItem]):
    class Meta:
        model = PlannedItem
        fields = ["id", "name", "role", "tier", "status"]
        read_only_fields = fields


class CallingKeySerializer(StrictModelSerializer[IngestKey]):
    campaign = serializers.SerializerMethodField(help_text="The key's one campaign.")
    items = serializers.SerializerMethodField(help_text="The campaign's items, cut ones aside.")
    kind = StrictCharField(read_only=True, help_text="The bound run kind; blank when not bound.")

    class Meta:
        model = IngestKey
        fields = ["prefix", "name", "campaign", "item", "kind", "items"]
        read_only_fields = fields

    def get_campaign(self, obj: IngestKey) -> dict[str, Any]:
        campaign = obj.campaign
        return {"id": campaign.pk, "title": campaign.title, "status": campaign.status}

    def get_items(self, obj: IngestKey) -> list[dict[str, Any]]:
        items = obj.campaign.items.exclude(status="cut").order_by("id")
        return list(KeyItemSerializer(items, many=True).data)


class CallingIngestKey(APIView):
    """`GET /ingest-key/`: the calling ingest key's own campaign and its items, so a training
    loop (or the README's curl block) reads its ids instead of having them typed in."""

    allow_ingest = True
    ingest_methods = frozenset({"GET"})

    @extend_schema(responses={200: CallingKeySerializer})
    def get(self, request: Request) -> Response:
        if not is_ingest(request.user):
            raise exceptions.PermissionDenied(
                "This describes the calling ingest key: call it with 'Authorization: Bearer cdk_…'."
            )
        key: IngestKey = request.auth  # type: ignore[assignment]  # IngestKeyAuthentication's
        return Response(CallingKeySerializer(key).data)
