"""GET /teams/{id}/budget/: the team's allowances per period with spent, committed, forecast
to the period's end, left and the run-out date (docs/api.md, docs/domain.md §22). Members
read; another team is a 404."""

from __future__ import annotations

from typing import Any

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from campaigns.models import Team, team_ids_for
from ledger.selectors import team_budget


class FiguresSerializer(serializers.Serializer[Any]):
    allowance = serializers.CharField()
    spent = serializers.CharField()
    committed = serializers.CharField()
    forecast = serializers.CharField()
    left = serializers.CharField()
    burn_per_hour = serializers.CharField()


class PeriodSerializer(serializers.Serializer[Any]):
    allowance_id = serializers.IntegerField()
    period = serializers.CharField(help_text="YYYY-MM or YYYY-Qn")
    period_kind = serializers.ChoiceField(choices=["month", "quarter"])
    start = serializers.DateTimeField()
    end = serializers.DateTimeField(help_text="Exclusive.")
    gpu_model = serializers.CharField(help_text='"" counts every GPU.')
    currency = serializers.CharField(allow_null=True)
    money = FiguresSerializer(allow_null=True, help_text="Decimal strings in `currency`.")
    gpu_hours = FiguresSerializer(allow_null=True)
    run_out_at = serializers.DateTimeField(allow_null=True)
    forecast_exceeds_allowance = serializers.BooleanField()
    other_currencies = serializers.ListField(child=serializers.CharField())


class TeamBudgetSerializer(serializers.Serializer[Any]):
    team = serializers.IntegerField()
    periods = PeriodSerializer(many=True)


class TeamBudget(APIView):
    @extend_schema(responses={200: TeamBudgetSerializer})
    def get(self, request: Request, id: int) -> Response:
        teams = Team.objects.all()
        if not getattr(request.user, "is_superuser", False):
            teams = teams.filter(pk__in=team_ids_for(request.user))
        team = get_object_or_404(teams, pk=id)
        periods = [team_budget.period_json(p) for p in team_budget.team_budget(team.pk)]
        return Response({"team": team.pk, "periods": periods})
