"""POST /campaigns/{id}/clone/: plan the next campaign from this one (docs/api.md,
docs/domain.md §21). Planners and owners of the campaign's team; another team's is a 404."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from campaigns.api.serializers import CampaignSerializer
from ledger import services
from ledger.api.views import CampaignScopedMixin


class CloneCampaign(CampaignScopedMixin, APIView):
    @extend_schema(request=None, responses={201: CampaignSerializer})
    def post(self, request: Request, campaign_id: int) -> Response:
        campaign = self.get_writable_campaign()
        clone = services.plan_next_campaign(campaign=campaign, user=request.user)
        return Response(CampaignSerializer(clone, context={"request": request}).data, status=201)
