"""GET /campaigns/{id}/spend/: the campaign's spend over time (docs/api.md, docs/domain.md §18).

Read-only for every member of the campaign's team; another team's campaign is a 404 and ingest
keys are refused (no `allow_ingest`), as everywhere in the ledger's API.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from ledger.api.views import CampaignScopedMixin
from ledger.selectors.spend import spend_over_time


class SpendPointSerializer(serializers.Serializer[Any]):
    at = serializers.DateTimeField()
    cumulative = serializers.CharField(help_text="Decimal string: incurred so far at `at`.")


class ProjectionSerializer(serializers.Serializer[Any]):
    at = serializers.DateTimeField(help_text="The forecast end (else the window end).")
    amount = serializers.CharField(help_text="Spend then if the running runs keep going.")
    low = serializers.CharField(help_text="Everything stops now.")
    high = serializers.CharField(help_text="The running runs go on to the end of the window.")
    uncertainty = serializers.CharField(help_text="What the projection assumes, in words.")


class LotWindowSerializer(serializers.Serializer[Any]):
    start = serializers.DateTimeField(allow_null=True)
    end = serializers.DateTimeField(allow_null=True)
    hours_left = serializers.CharField()


class SpendSerializer(serializers.Serializer[Any]):
    currency = serializers.CharField()
    series = SpendPointSerializer(many=True)
    spent = serializers.CharField(help_text="Ledger incurred + hourly accrual not yet posted.")
    budget = serializers.CharField(allow_null=True)
    burn_rate_per_hour = serializers.CharField(
        help_text="How fast spend grows now: running hourly runs' GPUs × the hourly rate."
    )
    projection = ProjectionSerializer(allow_null=True)
    lots = LotWindowSerializer(many=True)
    window_hours_left = serializers.CharField(allow_null=True)


class CampaignSpend(CampaignScopedMixin, APIView):
    @extend_schema(responses={200: SpendSerializer})
    def get(self, request: Request, campaign_id: int) -> Response:
        return Response(spend_over_time(self.get_campaign()))
