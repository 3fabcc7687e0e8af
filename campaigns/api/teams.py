"""GET /teams/{id}/: a team (docs/api.md). Members read; another team is a 404, ingest keys are
refused. Its alert channels (the webhook among them) are the ledger's:
`/teams/{id}/alert-channels/` (docs/domain.md §19.4).
"""

from __future__ import annotations

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from campaigns.api.fields import StrictModelSerializer
from campaigns.models import Team, team_ids_for


class TeamSerializer(StrictModelSerializer[Team]):
    class Meta:
        model = Team
        fields = ["id", "name"]
        read_only_fields = ["id", "name"]


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
