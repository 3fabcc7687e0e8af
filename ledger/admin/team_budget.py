"""Team allowances in the admin (docs/domain.md §22): owners state the team's allowance per month
or quarter; `ledger.services.team_budget` writes it."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin
from django.http import Http404, HttpRequest

from campaigns.admin import TeamScopedAdmin
from campaigns.admin.service_rows import ServiceWrittenRows
from campaigns.models import (
    Membership,
)
from campaigns.services.campaigns import real_user
from ledger.models import (
    TeamAllowance,
)
from ledger.services import team_budget as budget_services


class TeamAllowanceForm(forms.ModelForm[TeamAllowance]):
    class Meta:
        model = TeamAllowance
        fields = [
            "team",
            "period_kind",
            "period_start",
            "amount",
            "currency",
            "gpu_hours",
            "gpu_model",
        ]


@admin.register(TeamAllowance)
class TeamAllowanceAdmin(ServiceWrittenRows, TeamScopedAdmin):
    """Owners state the team's allowance per month or quarter; `ledger.services` writes it."""

    form = TeamAllowanceForm
    list_display = ["team", "period", "amount", "currency", "gpu_hours", "gpu_model"]
    # Only the teams of the rows the caller may see (get_queryset): the plain filter listed
    # every team's name to any member.
    list_filter = ["period_kind", ("team", admin.RelatedOnlyFieldListFilter)]
    search_fields = ["team__name", "gpu_model"]

    @admin.display(description="period")
    def period(self, obj: TeamAllowance) -> str:
        from ledger.domain.team_budget import period_label

        return period_label(obj.period_kind, obj.period_start)  # type: ignore[arg-type]

    def formfield_for_foreignkey(self, db_field: Any, request: HttpRequest, **kwargs: Any) -> Any:
        if db_field.name == "team" and not request.user.is_superuser:
            from campaigns.models import Team

            kwargs["queryset"] = Team.objects.filter(
                pk__in=Membership.objects.of(request.user)
                .filter(role="owner")
                .values_list("team_id", flat=True)
            )
        return super().formfield_for_foreignkey(db_field, request, **kwargs)

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        if obj is None or request.user.is_superuser:
            return super().has_change_permission(request, obj)
        return Membership.objects.has_role(request.user, obj.team_id, {"owner"})

    def write_row(self, request: HttpRequest, obj: Any, form: Any, change: bool) -> Any:
        data = form.cleaned_data
        if not Membership.objects.has_role(request.user, data["team"].pk, {"owner"}):
            raise Http404("Only the team's owners state its allowances.")
        return budget_services.set_allowance(acting_user=real_user(request.user), **data)
