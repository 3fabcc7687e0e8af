"""The team's portfolio page in the admin (docs/domain.md §22.5): every campaign of the team in
one table and the current period's burn-down against its allowance, server-rendered SVG. Served
by the ledger's team page extension (`ledger.admin.teams.TeamAdmin.portfolio_view`)."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse

from campaigns.models import Team
from ledger.selectors.portfolio import team_portfolio


def portfolio_page(model_admin: Any, request: HttpRequest, team: Team) -> HttpResponse:
    found = team_portfolio(team.pk)
    context = {
        **model_admin.admin_site.each_context(request),
        "title": f"Portfolio of “{team}”",
        "team": team,
        "opts": model_admin.model._meta,
        **found,
    }
    return TemplateResponse(request, "admin/ledger/portfolio.html", context)
