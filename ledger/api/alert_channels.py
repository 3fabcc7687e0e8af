"""A team's alert channels, the deliveries of its alerts, and its metric thresholds (docs/api.md,
docs/domain.md §19.4–19.5): members read, owners write (through `ledger.services`); another
team is a 404, ingest keys are refused. A channel's URL is never answered (only its host), nor
a webhook's secret, except the one generated at creation, answered once."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework import exceptions, generics, serializers
from rest_framework.request import Request
from rest_framework.response import Response

from campaigns.api.fields import StrictCharField, StrictModelSerializer
from campaigns.models import Membership, Role, Team, team_ids_for
from ledger.domain import alerts
from ledger.models import AlertChannel, AlertDelivery, ChannelKind, MetricThreshold
from ledger.selectors.alert_deliveries import team_deliveries
from ledger.services import alert_channels as services
from ledger.services import metric_thresholds

KIND_NAMES = list(alerts.KINDS)


class AlertChannelSerializer(StrictModelSerializer[AlertChannel]):
    target = StrictCharField(
        max_length=1000, required=False, allow_blank=True, write_only=True,
        help_text="e-mail: an address (blank: the team's owners); others: the webhook URL.",
    )  # fmt: skip
    secret = StrictCharField(
        max_length=200, required=False, allow_blank=True, allow_null=True,
        help_text="webhook: the signing secret (whsec_…); write-only, answered once when the "
        "server generated it.",
    )  # fmt: skip
    destination = serializers.SerializerMethodField()
    muted_kinds = serializers.ListField(
        child=serializers.ChoiceField(choices=KIND_NAMES), required=False
    )

    class Meta:
        model = AlertChannel
        fields = ["id", "kind", "name", "target", "destination", "secret", "muted_kinds",
                  "created_at"]  # fmt: skip
        read_only_fields = ["id", "destination", "created_at"]

    def get_destination(self, channel: AlertChannel) -> str:
        if channel.kind == ChannelKind.EMAIL:
            return channel.target or "owners"
        return urlsplit(channel.target).hostname or ""

    def to_representation(self, instance: AlertChannel) -> dict[str, Any]:
        data = super().to_representation(instance)
        data["secret"] = getattr(instance, "shown_secret", None)
        return data


class DeliverySerializer(serializers.ModelSerializer[AlertDelivery]):
    alert = serializers.IntegerField(source="alert_id")
    alert_kind = serializers.CharField(source="alert.kind")
    campaign = serializers.IntegerField(source="alert.campaign_id")
    channel = serializers.IntegerField(source="channel_id", allow_null=True)

    class Meta:
        model = AlertDelivery
        fields = ["id", "delivery_id", "alert", "alert_kind", "campaign", "channel", "kind",
                  "state", "attempts", "next_attempt_at", "sent_at", "last_status",
                  "last_error"]  # fmt: skip
        read_only_fields = fields


class ThresholdSerializer(StrictModelSerializer[MetricThreshold]):
    class Meta:
        model = MetricThreshold
        fields = ["id", "metric", "comparator", "threshold", "created_at"]
        read_only_fields = ["id", "created_at"]


class TeamScoped(generics.GenericAPIView[Any]):
    """The team named in the path, among the caller's; writes need its owner role."""

    def get_team(self) -> Team:
        teams = Team.objects.all()
        if not getattr(self.request.user, "is_superuser", False):
            teams = teams.filter(pk__in=team_ids_for(self.request.user))
        team: Team = get_object_or_404(teams, pk=self.kwargs["id"])
        if self.request.method not in ("GET", "HEAD", "OPTIONS") and not (
            Membership.objects.has_role(self.request.user, team.pk, {Role.OWNER})
        ):
            raise exceptions.PermissionDenied("Only the team's owners change its alerts.")
        return team


class AlertChannelList(TeamScoped, generics.ListCreateAPIView[AlertChannel]):
    serializer_class = AlertChannelSerializer
    pagination_class = None

    def get_queryset(self) -> Any:
        return AlertChannel.objects.filter(team=self.get_team()).order_by("id")

    def perform_create(self, serializer: Any) -> None:
        data = dict(serializer.validated_data)
        channel, shown = services.add_alert_channel(
            team=self.get_team(), acting_user=self.request.user, **data
        )
        channel.shown_secret = shown  # type: ignore[attr-defined]
        serializer.instance = channel


class AlertChannelDetail(TeamScoped, generics.RetrieveUpdateDestroyAPIView[AlertChannel]):
    serializer_class = AlertChannelSerializer
    http_method_names = ["get", "patch", "delete", "head", "options"]

    def get_queryset(self) -> Any:
        return AlertChannel.objects.filter(team=self.get_team())

    def perform_update(self, serializer: Any) -> None:
        data = dict(serializer.validated_data)
        if "kind" in data and data.pop("kind") != serializer.instance.kind:
            raise exceptions.ValidationError({"kind": "A channel's kind cannot change."})
        serializer.instance = services.change_alert_channel(
            channel=serializer.instance, acting_user=self.request.user, **data
        )

    def perform_destroy(self, instance: AlertChannel) -> None:
        services.remove_alert_channel(channel=instance, acting_user=self.request.user)


class AlertDeliveryList(TeamScoped, generics.ListAPIView[AlertDelivery]):
    """Newest first; `?state=` and `?kind=` filter."""

    serializer_class = DeliverySerializer

    def get_queryset(self) -> Any:
        rows = team_deliveries([self.get_team().pk])
        for field in ("state", "kind"):
            if self.request.query_params.get(field):
                rows = rows.filter(**{field: self.request.query_params[field]})
        return rows


class ThresholdList(TeamScoped, generics.ListCreateAPIView[MetricThreshold]):
    serializer_class = ThresholdSerializer
    pagination_class = None

    def get_queryset(self) -> Any:
        return MetricThreshold.objects.filter(team=self.get_team())

    def perform_create(self, serializer: Any) -> None:
        serializer.instance = metric_thresholds.add_threshold(
            team=self.get_team(), acting_user=self.request.user, **serializer.validated_data
        )


class ThresholdDetail(TeamScoped, generics.RetrieveDestroyAPIView[MetricThreshold]):
    serializer_class = ThresholdSerializer

    def get_queryset(self) -> Any:
        return MetricThreshold.objects.filter(team=self.get_team())

    @extend_schema(responses={204: None})
    def delete(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        metric_thresholds.remove_threshold(threshold=self.get_object(), acting_user=request.user)
        return Response(status=204)
