"""The team's page in the admin, extended by the ledger (docs/domain.md §19, §22,
docs/exports.md): its alert channels and deliveries (ledger/admin/alerts.py), links to its
budget, its ledger export (FOCUS CSV or Parquet) and its portfolio. The ledger
sits above the campaigns app, so it extends the team page rather than the page importing the
ledger (docs/domain.md §17). Imported by ledger/admin/__init__.py."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin
from django.http import Http404, HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils import timezone
from django.utils.html import format_html, format_html_join

from campaigns import admin as campaigns_admin
from campaigns.models import Team
from ledger.admin.alerts import destination
from ledger.api.ledger_export import FORMATS, export_response
from ledger.domain import team_budget
from ledger.models import AlertChannel
from ledger.selectors.alert_deliveries import delivery_states


class ExportForm(forms.Form):
    period = forms.CharField(
        max_length=8, help_text="YYYY-MM (a month) or YYYY-Qn (a quarter), UTC."
    )
    format = forms.ChoiceField(choices=[(f, f) for f in FORMATS], initial="csv")

    def clean_period(self) -> tuple[str, Any]:
        try:
            return team_budget.parse_period(self.cleaned_data["period"])
        except ValueError as exc:
            raise forms.ValidationError(str(exc)) from None


class TeamAdmin(campaigns_admin.TeamAdmin):
    readonly_fields = ["finance", "alert_channels"]

    @admin.display(description="Alert channels")
    def alert_channels(self, team: Team) -> str:
        """The team's channels with their last delivery, and where to add one or read every
        delivery (docs/domain.md §19.4–19.5)."""
        if team.pk is None:
            return "—"
        rows = format_html_join(
            "",
            "<li>{} — {} ({}){}</li>",
            (
                (c.get_kind_display(), c.name or "unnamed", destination(c),
                 f"; muted: {', '.join(c.muted_kinds)}" if c.muted_kinds else "")
                for c in AlertChannel.objects.filter(team=team)
            ),
        )  # fmt: skip
        states = ", ".join(f"{n} {state}" for state, n in delivery_states(team.pk)) or "none yet"
        return format_html(
            '<ul id="team-alert-channels">{}</ul><p>Deliveries: {}. '
            '<a href="{}" id="team-deliveries-link">Every delivery</a> · '
            '<a href="{}" id="team-add-channel-link">Add a channel</a></p>',
            rows or format_html("<li>{}</li>", "No channel: alerts reach no one."),
            states,
            reverse("admin:ledger_alertdelivery_changelist") + f"?team__id__exact={team.pk}",
            reverse("admin:ledger_alertchannel_add") + f"?team={team.pk}",
        )

    @admin.display(description="Money")
    def finance(self, team: Team) -> str:
        if team.pk is None:
            return "—"
        return format_html(
            '<a href="{}" id="team-portfolio-link">Portfolio</a> · '
            '<a href="{}" id="team-export-link">Export the ledger (FOCUS CSV/Parquet)</a> · '
            '<a href="{}">Allowances</a> · <a href="{}">Budget (API)</a>',
            reverse("admin:campaigns_team_portfolio", args=[team.pk]),
            reverse("admin:campaigns_team_export", args=[team.pk]),
            reverse("admin:ledger_teamallowance_changelist") + f"?team__id__exact={team.pk}",
            reverse("ledger:team-budget", args=[team.pk]),
        )

    def get_urls(self) -> list[Any]:
        return [
            path(
                "<int:team_id>/export/",
                self.admin_site.admin_view(self.export_view),
                name="campaigns_team_export",
            ),
            path(
                "<int:team_id>/portfolio/",
                self.admin_site.admin_view(self.portfolio_view),
                name="campaigns_team_portfolio",
            ),
            *super().get_urls(),
        ]

    def _team(self, request: HttpRequest, team_id: int) -> Team:
        team: Team | None = self.get_queryset(request).filter(pk=team_id).first()
        if team is None:
            raise Http404("No such team.")
        return team

    def export_view(self, request: HttpRequest, team_id: int) -> HttpResponse:
        """A period and a format, then the same file the API answers."""
        team = self._team(request, team_id)
        initial = {"period": team_budget.period_label("month", timezone.now().date())}
        form = ExportForm(request.GET if "period" in request.GET else None, initial=initial)
        if form.is_valid():
            kind, start = form.cleaned_data["period"]
            return export_response(team, form.cleaned_data["format"], kind, start)  # type: ignore[no-any-return]
        context = {
            **self.admin_site.each_context(request),
            "title": f"Export the ledger of “{team}”",
            "team": team,
            "form": form,
            "opts": self.model._meta,
        }
        return TemplateResponse(request, "admin/ledger/team_export.html", context)

    def portfolio_view(self, request: HttpRequest, team_id: int) -> HttpResponse:
        from ledger.admin.portfolio import portfolio_page

        return portfolio_page(self, request, self._team(request, team_id))


admin.site.unregister(Team)
admin.site.register(Team, TeamAdmin)
