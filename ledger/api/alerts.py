"""GET /campaigns/{id}/alerts/: the campaign's stored alerts, newest first (docs/api.md,
docs/domain.md §19). Read by every member of the campaign's team; ingest keys are refused."""

from __future__ import annotations

from typing import Any

from rest_framework import generics, serializers

from ledger.api.views import CampaignScopedMixin
from ledger.models import Alert


class AlertSerializer(serializers.ModelSerializer[Alert]):
    class Meta:
        model = Alert
        fields = ["id", "kind", "message", "raised_at", "resolved_at"]
        read_only_fields = fields


class CampaignAlerts(CampaignScopedMixin, generics.ListAPIView[Alert]):
    serializer_class = AlertSerializer

    def get_queryset(self) -> Any:
        return Alert.objects.filter(campaign=self.get_campaign()).order_by("-raised_at", "-id")
