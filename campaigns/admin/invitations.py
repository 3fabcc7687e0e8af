"""Invitations on the team's admin page (docs/domain.md §1.5): an owner types an e-mail
address and a role; campaigns/services/invitations.py stores the invitation and the e-mail
carries its link once the page's transaction commits. The page answers the same for every
address (nothing says whether it has an account), and nobody becomes a member here: the
invitee accepts on the link's page (campaigns/views/invitations.py)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import ValidationError
from django.core.mail import send_mail
from django.db import transaction
from django.db.models import QuerySet
from django.http import HttpRequest
from django.urls import reverse

from campaigns.admin.run_stop import acting
from campaigns.admin.tenancy import OWNERS, caller_has_role
from campaigns.models import Invitation, Team
from campaigns.services import invitations


class InvitationForm(forms.ModelForm[Invitation]):
    class Meta:
        model = Invitation
        fields = ["email", "role"]

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if "email" in data and "role" in data:
            try:
                data["email"] = invitations.check_invitation(email=data["email"], role=data["role"])
            except ValidationError as exc:
                for field, errors in exc.message_dict.items():
                    self.add_error(field, errors)
        return data


class InvitationInline(admin.TabularInline[Invitation, Team]):
    """The pending invitations, and a row to add one; a sent one is revoked, not edited."""

    model = Invitation
    form = InvitationForm
    fields = ["email", "role", "invited_by", "expires_at"]
    readonly_fields = ["invited_by", "expires_at"]
    extra = 0
    verbose_name = "invitation (the person accepts it from the e-mailed link)"
    verbose_name_plural = "invitations waiting for an answer"

    def get_queryset(self, request: HttpRequest) -> QuerySet[Any]:
        return super().get_queryset(request).filter(pk__in=Invitation.objects.pending())

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        # Django asks without the team when it builds the rows' queryset (already the page's
        # team's); with the team it decides whether the inline is on the page: owners only.
        return obj is None or caller_has_role(request, obj.pk, OWNERS)

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return caller_has_role(request, obj.pk if obj else None, OWNERS)

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return caller_has_role(request, obj.pk if obj else None, OWNERS)


def save_invitations(request: HttpRequest, team: Team, formset: Any) -> None:
    """Each new row becomes an invitation (its e-mail sent after the commit); each deleted row
    is revoked."""
    formset.new_objects, formset.changed_objects, formset.deleted_objects = [], [], []
    for row in formset.deleted_forms:
        if row.instance.pk is not None:
            invitations.revoke_invitation(invitation=row.instance, acting_user=acting(request))
            formset.deleted_objects.append(row.instance)
    for row in formset.forms:
        if row in formset.deleted_forms or row.instance.pk is not None or not row.has_changed():
            continue
        invitation, raw = invitations.invite(
            team=team,
            email=row.cleaned_data["email"],
            role=row.cleaned_data["role"],
            acting_user=acting(request),
        )
        link = request.build_absolute_uri(reverse("invitation", args=[raw]))
        transaction.on_commit(_send_later(invitation, link))
        formset.new_objects.append(invitation)
        # The same words whatever the address: the page never says who has an account.
        messages.info(
            request,
            f"An invitation to {team} ({invitation.get_role_display().lower()}) is on its way "
            f"to {invitation.email}. Nobody is added until the person accepts it.",
        )


def _send_later(invitation: Invitation, link: str) -> Callable[[], None]:
    """The e-mail, once the page's transaction commits (a named function: Django's on-commit
    error log names it)."""

    def send_the_invitation() -> None:
        send_invitation(invitation, link)

    return send_the_invitation


def send_invitation(invitation: Invitation, link: str) -> None:
    inviter = invitation.invited_by.get_username() if invitation.invited_by else "An owner"
    send_mail(
        subject=f"You are invited to {invitation.team} on Campaign Desk",
        message=(
            f"Hello,\n\n{inviter} invites you to the team {invitation.team} on Campaign Desk "
            f"as {invitation.get_role_display().lower()}. Open this link to accept, signed in "
            f"with your account or with one you create there:\n\n{link}\n\n"
            f"The link works once, until {invitation.expires_at:%Y-%m-%d %H:%M} UTC. If you "
            "did not expect this e-mail, ignore it: nothing happens until you accept."
        ),
        from_email=None,
        recipient_list=[invitation.email],
    )
