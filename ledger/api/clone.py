"""POST /campaigns/{id}/clone/: plan the next campaign from this one (docs/api.md,
docs/domain.md §21). Planners and owners of the campaign's team; another team's is a 404."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema, extend_schema_field
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from campaigns.api.serializers import CampaignSerializer
from campaigns.models import Campaign
from campaigns.services.campaigns import real_user
from estimates.selectors.next_plan import clone_provenance
from ledger import services
from ledger.api.views import CampaignScopedMixin


class LessonSerializer(serializers.Serializer[dict[str, Any]]):
    """Where one planned figure of the clone came from (docs/domain.md §21)."""

    subject = serializers.ChoiceField(choices=["item", "stage"])
    id = serializers.IntegerField()
    name = serializers.CharField()
    kind = serializers.CharField(help_text="The stage kind whose lesson it took.")
    gpu = serializers.CharField()
    planned_before = serializers.CharField(help_text="The predecessor's planned hours.")
    hours = serializers.CharField(help_text="The clone's planned hours: before × ratio.")
    ratio = serializers.CharField(allow_null=True, help_text="None: kept as planned before.")
    # A field named `source` shadows DRF's Field.source for the type checker only (the
    # metaclass takes declared fields out of the class).
    source = serializers.ChoiceField(  # type: ignore[assignment]
        choices=["this campaign", "team", "none"]
    )
    words = serializers.CharField()
    spread = serializers.DictField(child=serializers.FloatField(allow_null=True))
    stages = serializers.IntegerField(help_text="The predecessor's observed stages of the kind.")
    count = serializers.IntegerField(help_text="The team median's observations (0: not used).")
    source_campaigns = serializers.ListField(child=serializers.DictField())
    from_campaign = serializers.DictField()


class ClonedCampaignSerializer(CampaignSerializer):
    """The new draft, with where each of its planned figures came from."""

    provenance = serializers.SerializerMethodField()

    class Meta(CampaignSerializer.Meta):
        fields = [*CampaignSerializer.Meta.fields, "provenance"]
        read_only_fields = [*CampaignSerializer.Meta.read_only_fields, "provenance"]

    @extend_schema_field(LessonSerializer(many=True))
    def get_provenance(self, campaign: Campaign) -> list[dict[str, Any]]:
        return clone_provenance(campaign)


class CloneCampaign(CampaignScopedMixin, APIView):
    @extend_schema(request=None, responses={201: ClonedCampaignSerializer})
    def post(self, request: Request, campaign_id: int) -> Response:
        campaign = self.get_writable_campaign()
        clone = services.plan_next_campaign(campaign=campaign, acting_user=real_user(request.user))
        return Response(
            ClonedCampaignSerializer(clone, context={"request": request}).data, status=201
        )
