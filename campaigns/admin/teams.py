"""Teams and their members in the admin: superusers create teams, a team's owners manage its
members (named by username) (docs/domain.md §1). Every write goes through
campaigns/services/teams.py, as from the commands. The team's alert channels are the ledger's
inline on this page (ledger/team_admin.py, docs/domain.md §19.4)."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.contrib.auth.tokens import default_token_generator
from django.core.exceptions import ValidationError
from django.core.mail import send_mail
from django.core.validators import validate_email
from django.db import transaction
from django.db.models import QuerySet
from django.forms.models import BaseInlineFormSet
from django.http import HttpRequest
from django.urls import reverse
from django.utils.encoding import force_bytes
from django.utils.http import urlsafe_base64_encode

from campaigns.admin.refusals import RefusalsAsFieldErrors, refusal_of
from campaigns.admin.tenancy import OWNERS, NotFoundOutsideTeams, caller_has_role, caller_team_ids
from campaigns.models import Membership, Team
from campaigns.services import teams
from campaigns.services.campaigns import real_user


class MembershipForm(forms.ModelForm[Membership]):
    """Members are named by username: owners never see a list of every user of the service."""

    username = forms.CharField(
        max_length=254,
        label="username or e-mail",
        help_text="An existing user's username or e-mail; a new address invites the person "
        "(they get a one-time link to set their password).",
    )
    invite_email: str = ""

    class Meta:
        model = Membership
        fields = ["role"]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if self.instance.pk:
            self.fields["username"].initial = self.instance.user.get_username()

    def clean_username(self) -> str:
        from django.contrib.auth import get_user_model

        username: str = self.cleaned_data["username"].strip()
        users = get_user_model().objects
        user = users.filter(username=username).first()
        if user is None and "@" in username:
            user = users.filter(email__iexact=username).order_by("id").first()
            if user is None:
                try:
                    validate_email(username)
                except ValidationError:
                    raise ValidationError(f"{username!r} is not an e-mail address.") from None
                self.invite_email = username  # a new member: invited when the page saves
                return username
        if user is None:
            raise ValidationError(
                f"No user named {username!r}: type their e-mail address instead, and they "
                "get a one-time link to set their password."
            )
        self.instance.user = user
        return user.get_username()

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        new_member = not self.instance.pk or data.get("username") != self["username"].initial
        if (
            "username" in self.errors
            or not self.instance.team_id
            or not new_member
            or self.invite_email
        ):
            return data
        try:
            teams.check_add_member(team=self.instance.team, member=self.instance.user)
        except ValidationError as exc:
            self.add_error("username", exc.message_dict["member"])
        return data


class MembershipFormSet(BaseInlineFormSet):  # type: ignore[type-arg]
    def clean(self) -> None:
        super().clean()
        seen: set[str] = set()
        for form in self.forms:
            username = getattr(form, "cleaned_data", {}).get("username")
            if not username or form in self.deleted_forms:
                continue
            if username in seen:
                raise ValidationError(f"{username} is listed twice: one role per member.")
            seen.add(username)


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
class TeamAdmin(RefusalsAsFieldErrors, NotFoundOutsideTeams, admin.ModelAdmin[Team]):
    form = TeamForm
    list_display = ["name", "created_at"]
    search_fields = ["name"]

    class MembershipInline(admin.TabularInline[Membership, Team]):
        model = Membership
        form = MembershipForm
        formset = MembershipFormSet
        fields = ["username", "role"]
        extra = 0

        # Team roles, not Django's model permissions: a team's owners manage its members.
        def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
            return True

        def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
            return caller_has_role(request, obj.pk if obj else None, OWNERS)

        def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
            return caller_has_role(request, obj.pk if obj else None, OWNERS)

        def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
            return caller_has_role(request, obj.pk if obj else None, OWNERS)

    inlines = [MembershipInline]

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

    def save_model(self, request: HttpRequest, obj: Team, form: Any, change: bool) -> None:
        name = form.cleaned_data["name"]
        if not change:
            created = teams.create_team(name=name, acting_user=real_user(request.user))
            obj.pk, obj._state = created.pk, created._state
        elif "name" in form.changed_data:
            teams.rename_team(team=obj, name=name, acting_user=real_user(request.user))
        obj.refresh_from_db()

    def delete_model(self, request: HttpRequest, obj: Team) -> None:
        teams.delete_team(team=obj, acting_user=real_user(request.user))

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> None:
        for team in queryset:
            teams.delete_team(team=team, acting_user=real_user(request.user))

    def save_formset(self, request: HttpRequest, form: Any, formset: Any, change: bool) -> None:
        """Members through campaigns/services/teams.py; the lists feed the admin's history."""
        formset.new_objects, formset.changed_objects, formset.deleted_objects = [], [], []
        for row in formset.deleted_forms:
            if row.instance.pk is not None:
                with refusal_of(request, row.prefix):
                    teams.remove_member(
                        membership=row.instance, acting_user=real_user(request.user)
                    )
                    formset.deleted_objects.append(row.instance)
        for row in formset.forms:
            if row in formset.deleted_forms or not row.has_changed():
                continue
            with refusal_of(request, row.prefix):
                saved = _save_member(form.instance, row, request.user, request)
                if row.instance.pk is None:
                    formset.new_objects.append(saved)
                else:
                    formset.changed_objects.append((saved, row.changed_data))


def _save_member(team: Team, row: MembershipForm, user: Any, request: HttpRequest) -> Membership:
    role = row.cleaned_data["role"]
    if row.invite_email:
        if row.instance.pk is not None:
            teams.remove_member(membership=row.instance, acting_user=user)
        membership, member = teams.invite_member(
            team=team, email=row.invite_email, role=role, acting_user=user
        )
        link = password_link(request, member)
        transaction.on_commit(lambda: _send_invitation(member, team, link))
        # Not opening with the address: the admin capitalises a message's first letter.
        messages.info(
            request,
            f"An e-mail with a one-time link to set the password is on its way to "
            f"{row.invite_email}, now {member.get_username()} ({role}) in {team}.",
        )
        return membership
    member = row.instance.user
    if row.instance.pk is None:
        return teams.add_member(team=team, member=member, role=role, acting_user=user)
    if "username" in row.changed_data:
        # Another user in this row: the old membership ends, the new one starts.
        teams.remove_member(membership=row.instance, acting_user=user)
        return teams.add_member(team=team, member=member, role=role, acting_user=user)
    return teams.change_role(membership=row.instance, role=role, acting_user=user)


def password_link(request: HttpRequest, member: Any) -> str:
    """The one-time link that sets `member`'s password (Django's password-reset token: it
    stops working once the password is set)."""
    uid = urlsafe_base64_encode(force_bytes(member.pk))
    token = default_token_generator.make_token(member)
    return request.build_absolute_uri(reverse("password_reset_confirm", args=[uid, token]))


def _send_invitation(member: Any, team: Team, link: str) -> None:
    send_mail(
        subject=f"You were added to {team} on Campaign Desk",
        message=(
            f"Hello,\n\nyou were added to the team {team} on Campaign Desk as "
            f"{member.get_username()}. Set your password with this one-time link:\n\n{link}\n\n"
            "Then sign in at the admin with that username."
        ),
        from_email=None,
        recipient_list=[member.email],
    )
