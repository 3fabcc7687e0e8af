"""GET, PATCH /teams/{id}/: a team, and its alert webhook (docs/api.md, docs/domain.md §19).

Members read (the secret is never shown back, only whether one is set); owners set the
webhook's URL and secret. Another team is a 404, ingest keys are refused.
"""

from __future__ import annotations

from typing import Any

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework import exceptions, serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from campaigns import services
from campaigns.api.fields import StrictCharField, StrictModelSerializer
from campaigns.models import Membership, Role, Team, team_ids_for


class TeamSerializer(StrictModelSerializer[Team]):
    webhook_url = serializers.URLField(
        max_length=500,
        required=False,
        allow_blank=True,
        help_text="Alerts are POSTed here as JSON (blank: no webhook).",
    )
    webhook_secret = StrictCharField(
        max_length=200,
        required=False,
        allow_blank=True,
        write_only=True,
        help_text="Signs each POST: X-Desk-Signature: sha256=<hex HMAC-SHA256 of the raw body>.",
    )
    webhook_secret_set = serializers.SerializerMethodField()

    class Meta:
        model = Team
        fields = ["id", "name", "webhook_url", "webhook_secret", "webhook_secret_set"]
        read_only_fields = ["id", "name"]

    def get_webhook_secret_set(self, team: Team) -> bool:
        return bool(team.webhook_secret)


class TeamDetail(APIView):
    def get_team(self, request: Request, id: int) -> Team:
        teams = Team.objects.all()
        if not getattr(request.user, "is_superuser", False):
            teams = teams.filter(pk__in=team_ids_for(request.user))
        team: Team = get_object_or_404(teams, pk=id)
        return team

    @extend_schema(responses={200: TeamSerializer})
    def get(self, request: Request, id: int) -> Response:
        return Response(TeamSerializer(self.get_team(request, id)).data)

    @extend_schema(request=TeamSerializer, responses={200: TeamSerializer})
    def patch(self, request: Request, id: int) -> Response:
        team = self.get_team(request, id)
        if not Membership.objects.has_role(request.user, team.pk, {Role.OWNER}):
            raise exceptions.PermissionDenied("Only the team's owners set its webhook.")
        serializer = TeamSerializer(team, data=request.data, partial=True)
        serializer.is_valid(raise_exception=True)
        changes: dict[str, Any] = dict(serializer.validated_data)
        team = services.set_team_webhook(team=team, user=request.user, **changes)
        return Response(TeamSerializer(team).data)
