"""The team's page in the admin, extended by the ledger (docs/domain.md §22, docs/exports.md):
links to its budget, its ledger export (FOCUS CSV or Parquet) and its portfolio. The ledger
sits above the campaigns app, so it extends the team page rather than the page importing the
ledger (docs/domain.md §17). Imported by ledger/admin.py."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin
from django.http import Http404, HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils import timezone
from django.utils.html import format_html

from campaigns import admin as campaigns_admin
from campaigns.models import Membership, Role, Team
from ledger.api.ledger_export import FORMATS, export_response
from ledger.domain import team_budget as periods
from ledger.models import AlertChannel
from ledger.services import alert_channels as channel_services


class ExportForm(forms.Form):
    period = forms.CharField(
        max_length=8, help_text="YYYY-MM (a month) or YYYY-Qn (a quarter), UTC."
    )
    format = forms.ChoiceField(choices=[(f, f) for f in FORMATS], initial="csv")

    def clean_period(self) -> tuple[str, Any]:
        try:
            return periods.parse_period(self.cleaned_data["period"])
        except ValueError as exc:
            raise forms.ValidationError(str(exc)) from None


class AlertChannelForm(forms.ModelForm[AlertChannel]):
    class Meta:
        model = AlertChannel
        fields = ["kind", "name", "url"]
        widgets = {"url": forms.PasswordInput(render_value=False)}
        help_texts = {"url": "The channel's webhook URL (https); never shown back."}

    def clean_url(self) -> str:
        url = str(self.cleaned_data["url"]).strip()
        if not url.startswith("https://"):
            raise forms.ValidationError("a chat webhook URL starts with https://")
        return url


class AlertChannelInline(admin.TabularInline[AlertChannel, Team]):
    """Slack/Teams channels for the team's alerts (owners); a channel is removed, not edited."""

    model = AlertChannel
    form = AlertChannelForm
    extra = 0
    fields = ["kind", "name", "url"]

    def _owner(self, request: HttpRequest, obj: Any) -> bool:
        return Membership.objects.has_role(request.user, obj.pk if obj else None, {Role.OWNER})

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return self._owner(request, obj)

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return self._owner(request, obj)

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return self._owner(request, obj)


class TeamAdmin(campaigns_admin.TeamAdmin):
    readonly_fields = ["finance"]
    inlines = [*campaigns_admin.TeamAdmin.inlines, AlertChannelInline]

    def save_formset(self, request: HttpRequest, form: Any, formset: Any, change: bool) -> None:
        if formset.model is not AlertChannel:
            super().save_formset(request, form, formset, change)
            return
        # Through the ledger's services, as the other writes; the change message reads these.
        formset.new_objects, formset.changed_objects, formset.deleted_objects = [], [], []
        for each in formset.deleted_forms:
            if each.instance.pk:
                channel_services.remove_alert_channel(channel=each.instance, user=request.user)
                formset.deleted_objects.append(each.instance)
        for each in formset.extra_forms:
            if each.has_changed() and each not in formset.deleted_forms:
                formset.new_objects.append(
                    channel_services.add_alert_channel(
                        team=form.instance,
                        user=request.user,
                        kind=each.cleaned_data["kind"],
                        url=each.cleaned_data["url"],
                        name=each.cleaned_data.get("name", ""),
                    )
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
        initial = {"period": periods.period_label("month", timezone.now().date())}
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
        from ledger.portfolio_admin import portfolio_page

        return portfolio_page(self, request, self._team(request, team_id))


admin.site.unregister(Team)
admin.site.register(Team, TeamAdmin)
