"""Invitations to a team (docs/domain.md §1.5): an owner invites an address; the person who
opens the link accepts it, signed in or with the account they create there; only then is
there a membership.

- `invite`: the row and its link's token (returned this once, for the e-mail). The same answer
  whatever the address: nothing here looks an account up, so the owner's form cannot tell
  which addresses have accounts. A new invitation of the same address to the same team
  replaces a pending one (its link stops working).
- `accept_invitation`: the signed-in `acting_user` joins the team with the invited role.
- `accept_with_new_account`: a new account (the username and password the invitee chose, the
  invited address) joins the team. Never an existing account: no invitation adopts or merges
  accounts (issue 32: two racing invitations once made one account of two invitees).

Accepting locks the invitation's row (`select_for_update`): of two accepts of one link, the
second waits, then finds it used and is refused (`InvitationUnusable`).
"""

from __future__ import annotations

import secrets
from datetime import timedelta

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.core.validators import validate_email
from django.db import IntegrityError, transaction
from django.utils import timezone

from campaigns.models import Invitation, Membership, Role, Team


class InvitationUnusable(Exception):
    """The link is unknown, used, expired or replaced: one message for all four, so that a
    link tells nothing about the others."""

    message = (
        "This invitation link does not work: it was used already, it expired, or a newer "
        "invitation replaced it. Ask the team's owner for a new one."
    )


def check_invitation(*, email: str, role: str) -> str:
    """The address as it will be stored; a ValidationError naming the field otherwise."""
    email = email.strip()
    try:
        validate_email(email)
    except ValidationError:
        raise ValidationError({"email": f"{email!r} is not an e-mail address"}) from None
    if role not in Role.values:
        raise ValidationError({"role": f"role must be one of {', '.join(Role.values)}"})
    return email


@transaction.atomic
def invite(
    *, team: Team, email: str, role: str = Role.PLANNER, acting_user: User | None = None
) -> tuple[Invitation, str]:
    """A pending invitation of `email` to `team` and the raw token of its link."""
    email = check_invitation(email=email, role=role)
    now = timezone.now()
    Invitation.objects.pending().filter(team_id=team.pk, email__iexact=email).update(expires_at=now)
    raw = secrets.token_urlsafe(32)
    invitation = Invitation.objects.create(
        team=team,
        email=email,
        role=role,
        token_hash=Invitation.hash(raw),
        invited_by=acting_user,
        expires_at=now + timedelta(days=float(settings.INVITATION_DAYS)),
    )
    return invitation, raw


@transaction.atomic
def revoke_invitation(*, invitation: Invitation, acting_user: User | None = None) -> None:
    """A pending invitation's link stops working; an accepted one stays as the record."""
    Invitation.objects.filter(pk=invitation.pk, accepted_at__isnull=True).delete()


def _locked(raw: str) -> Invitation:
    """The invitation of the link `raw`, locked until the transaction ends, if it still works."""
    found = (
        Invitation.objects.select_for_update()
        .select_related("team")
        .filter(token_hash=Invitation.hash(raw))
        .first()
    )
    if found is None or found.state != "pending":
        raise InvitationUnusable(InvitationUnusable.message)
    return found


def _join(invitation: Invitation, user: User) -> Membership:
    """`user` joins with the invited role; a member already keeps the role they have."""
    membership, _created = Membership.objects.get_or_create(
        team=invitation.team, user=user, defaults={"role": invitation.role}
    )
    invitation.accepted_at = timezone.now()
    invitation.accepted_by = user
    invitation.save(update_fields=["accepted_at", "accepted_by"])
    return membership


@transaction.atomic
def accept_invitation(*, token: str, acting_user: User) -> Membership:
    """The signed-in `acting_user` accepts the invitation of the link `token`."""
    if not acting_user.is_authenticated or not acting_user.is_active:
        raise InvitationUnusable("Sign in first, then accept.")
    return _join(_locked(token), acting_user)


@transaction.atomic
def accept_with_new_account(*, token: str, username: str, password: str) -> Membership:
    """A new staff account named `username` (the caller validated the password) accepts the
    invitation; its e-mail is the invited address, which the link proved."""
    invitation = _locked(token)
    users = get_user_model().objects
    username = username.strip()
    if users.filter(username__iexact=username).exists():
        raise ValidationError({"username": f"the username {username!r} is taken: choose another"})
    try:
        with transaction.atomic():
            user = users.create_user(
                username=username, email=invitation.email, password=password, is_staff=True
            )
    except IntegrityError:
        # Another account took the name between the check and the insert.
        raise ValidationError(
            {"username": f"the username {username!r} is taken: choose another"}
        ) from None
    return _join(invitation, user)
