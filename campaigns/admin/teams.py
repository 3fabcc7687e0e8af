"""Teams and their members in the admin: superusers create teams, a team's owners manage its
members (named by username) and its alert webhook (docs/domain.md §19)."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin
from django.core.exceptions import ValidationError
from django.db.models import QuerySet, URLField
from django.http import HttpRequest

from campaigns import services
from campaigns.admin.tenancy import OWNERS, NotFoundOutsideTeams, caller_has_role, caller_team_ids
from campaigns.models import Membership, Team


class MembershipForm(forms.ModelForm[Membership]):
    """Members are named by username: owners never see a list of every user of the service."""

    username = forms.CharField(max_length=150)

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
        user = get_user_model().objects.filter(username=username).first()
        if user is None:
            raise ValidationError(
                f"No user named {username!r}: create it with "
                f"`manage.py create_team TEAM --member {username}`."
            )
        self.instance.user = user
        return username


class TeamForm(forms.ModelForm[Team]):
    # Write-only like the API's (docs/api.md): never shown back; blank keeps the stored one.
    webhook_secret = forms.CharField(
        required=False,
        max_length=200,
        widget=forms.PasswordInput(render_value=False),
        help_text="Signs each alert (X-Desk-Signature: sha256=<hex HMAC-SHA256 of the body>). "
        "Never shown back; leave blank to keep the stored secret.",
    )

    class Meta:
        model = Team
        fields = ["name", "webhook_url", "webhook_secret"]


@admin.register(Team)
class TeamAdmin(NotFoundOutsideTeams, admin.ModelAdmin[Team]):
    form = TeamForm
    list_display = ["name", "created_at"]
    search_fields = ["name"]
    # The alert webhook (docs/domain.md §19): a URL typed without a scheme means https.
    formfield_overrides = {URLField: {"assume_scheme": "https"}}

    class MembershipInline(admin.TabularInline[Membership, Team]):
        model = Membership
        form = MembershipForm
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
        # The webhook goes through its one write path (services.set_team_webhook), as from the
        # API: the form's copy of it is put back before the team's own fields are saved.
        stored = Team.objects.filter(pk=obj.pk).values("webhook_url", "webhook_secret").first()
        obj.webhook_url = stored["webhook_url"] if stored else ""
        obj.webhook_secret = stored["webhook_secret"] if stored else ""
        super().save_model(request, obj, form, change)
        saved = services.set_team_webhook(
            team=obj,
            user=request.user,
            webhook_url=form.cleaned_data.get("webhook_url") or "",
            webhook_secret=form.cleaned_data.get("webhook_secret") or None,
        )
        obj.webhook_url, obj.webhook_secret = saved.webhook_url, saved.webhook_secret
