"""`GET /api/v1/campaigns/{id}/timeline/`: the campaign's one timeline (docs/domain.md §7.7):
planned, observed and forecast hours per stage and in all, the slack, the lots and what to buy,
the critical path and the plan's warnings. Members of the campaign's team (another team's
campaign answers 404)."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from campaigns.api.permissions import campaign_for
from estimates.api.serializers.timeline import TimelineSerializer
from estimates.selectors.timeline import campaign_timeline_json


class CampaignTimeline(APIView):
    """The campaign's calendar as committed, as observed and as forecast."""

    @extend_schema(responses={200: TimelineSerializer}, summary="The campaign's timeline")
    def get(self, request: Request, campaign_id: int) -> Response:
        return Response(campaign_timeline_json(campaign_for(request, campaign_id)))
