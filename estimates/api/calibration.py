"""GET /teams/{id}/calibration/: observed ÷ estimated hours per stage kind and GPU across the
team's campaigns (docs/api.md, docs/domain.md §20). Members read; another team is a 404."""

from __future__ import annotations

from typing import Any

from django.http import Http404
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from estimates.domain.calibration import MIN_OBSERVATIONS
from estimates.selectors.calibration import readable_team, team_calibrations


class SpreadSerializer(serializers.Serializer[Any]):
    min = serializers.FloatField()
    max = serializers.FloatField()
    p25 = serializers.FloatField(allow_null=True)
    p75 = serializers.FloatField(allow_null=True)


class SourceCampaignSerializer(serializers.Serializer[Any]):
    id = serializers.IntegerField()
    title = serializers.CharField()


class CalibrationRowSerializer(serializers.Serializer[Any]):
    stage_kind = serializers.CharField()
    gpu = serializers.CharField(help_text='The GPU model; "" when the stages name none.')
    count = serializers.IntegerField()
    median_ratio = serializers.FloatField(help_text="Median of observed ÷ estimated hours.")
    spread = SpreadSerializer()
    applies = serializers.BooleanField(
        help_text=f"Forecasts apply the median from {MIN_OBSERVATIONS} observations."
    )
    source_campaigns = SourceCampaignSerializer(many=True)


class CalibrationSerializer(serializers.Serializer[Any]):
    team = serializers.IntegerField()
    min_observations = serializers.IntegerField()
    groups = CalibrationRowSerializer(many=True)


class TeamCalibration(APIView):
    @extend_schema(responses={200: CalibrationSerializer})
    def get(self, request: Request, id: int) -> Response:
        team = readable_team(request.user, id)
        if team is None:
            raise Http404("No such team.")
        return Response(
            {
                "team": team.pk,
                "min_observations": MIN_OBSERVATIONS,
                "groups": [c.as_json() for c in team_calibrations(team.pk)],
            }
        )
