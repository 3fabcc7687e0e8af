"""Teams and their members in the admin: superusers create teams, a team's owners manage its
members (docs/domain.md §1). Every write goes through campaigns/services/teams.py, as from the
commands. Nobody is added here: an owner invites an address (campaigns/admin/invitations.py)
and the person accepts from the link (docs/domain.md §1.5); here an owner changes a member's
role or removes them. The team's alert channels are the ledger's inline on this page
(ledger/admin/teams.py, docs/domain.md §19.4)."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin
from django.core.exceptions import ValidationError
from django.db.models import QuerySet
from django.http import HttpRequest

from campaigns.admin.invitations import InvitationInline, save_invitations
from campaigns.admin.refusals import RefusalsAsFieldErrors, refusal_of
from campaigns.admin.service_rows import ServiceWrittenRows
from campaigns.admin.tenancy import OWNERS, NotFoundOutsideTeams, caller_has_role, caller_team_ids
from campaigns.models import Invitation, Membership, Team
from campaigns.services import teams
from campaigns.services.campaigns import real_user


class MembershipForm(forms.ModelForm[Membership]):
    """A member's role; the member is shown, never typed (no one joins without accepting)."""

    class Meta:
        model = Membership
        fields = ["role"]


class TeamForm(forms.ModelForm[Team]):
    class Meta:
        model = Team
        fields = ["name"]

    def clean_name(self) -> str:
        name: str = self.cleaned_data["name"]
        try:
            teams.check_team_name(name=name, team=self.instance)
        except ValidationError as exc:
            raise ValidationError(exc.message_dict["name"]) from exc
        return name.strip()


@admin.register(Team)
class TeamAdmin(
    ServiceWrittenRows, RefusalsAsFieldErrors, NotFoundOutsideTeams, admin.ModelAdmin[Team]
):
    form = TeamForm
    list_display = ["name", "created_at"]
    search_fields = ["name"]

    class MembershipInline(admin.TabularInline[Membership, Team]):
        model = Membership
        form = MembershipForm
        fields = ["member", "role"]
        readonly_fields = ["member"]
        extra = 0

        @admin.display(description="member")
        def member(self, obj: Membership) -> str:
            return obj.user.get_username() if obj.pk else ""

        # Team roles, not Django's model permissions: a team's owners manage its members.
        def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
            return True

        def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
            return False  # by invitation only

        def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
            return caller_has_role(request, obj.pk if obj else None, OWNERS)

        def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
            return caller_has_role(request, obj.pk if obj else None, OWNERS)

    inlines = [MembershipInline, InvitationInline]

    def get_queryset(self, request: HttpRequest) -> QuerySet[Any]:
        qs = super().get_queryset(request)
        return qs if request.user.is_superuser else qs.filter(pk__in=caller_team_ids(request))

    def has_module_permission(self, request: HttpRequest) -> bool:
        return request.user.is_active and (
            request.user.is_superuser or bool(caller_team_ids(request))
        )

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return self.has_module_permission(request)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return request.user.is_superuser

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        # Owners manage their team's members.
        return caller_has_role(request, obj.pk if obj else None, OWNERS)

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return request.user.is_superuser

    def write_row(self, request: HttpRequest, obj: Team, form: Any, change: bool) -> Team:
        name = form.cleaned_data["name"]
        if not change:
            return teams.create_team(name=name, acting_user=real_user(request.user))
        if "name" in form.changed_data:
            teams.rename_team(team=obj, name=name, acting_user=real_user(request.user))
        obj.refresh_from_db()
        return obj

    def delete_model(self, request: HttpRequest, obj: Team) -> None:
        teams.delete_team(team=obj, acting_user=real_user(request.user))

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> None:
        for team in queryset:
            teams.delete_team(team=team, acting_user=real_user(request.user))

    def save_formset(self, request: HttpRequest, form: Any, formset: Any, change: bool) -> None:
        """Members through campaigns/services/teams.py, invitations through
        campaigns/services/invitations.py; the lists feed the admin's history."""
        if formset.model is Invitation:
            save_invitations(request, form.instance, formset)
            return
        formset.new_objects, formset.changed_objects, formset.deleted_objects = [], [], []
        for row in formset.deleted_forms:
            if row.instance.pk is not None:
                with refusal_of(request, row.prefix):
                    teams.remove_member(
                        membership=row.instance, acting_user=real_user(request.user)
                    )
                    formset.deleted_objects.append(row.instance)
        for row in formset.forms:
            if row in formset.deleted_forms or not row.has_changed() or row.instance.pk is None:
                continue
            with refusal_of(request, row.prefix):
                saved = teams.change_role(
                    membership=row.instance,
                    role=row.cleaned_data["role"],
                    acting_user=real_user(request.user),
                )
                formset.changed_objects.append((saved, row.changed_data))
