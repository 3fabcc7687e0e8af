"""The write path for teams and their members (docs/domain.md §1): one `@transaction.atomic`,
keyword-only function per action, called by the team admin, its membership inline and the
`create_team` and `load_demo` commands. Who may call them (superusers create teams, a team's
owners manage its members) is the caller's check.

A refusal that must show beside a form field before anything is written has its `check_*`
function, which the action calls first; the ValidationError names the field (`name`, `member`,
`role`). A new team is announced (`signals.team_created`): the ledger gives it its default
alert channel (docs/domain.md §19.3).
"""

from __future__ import annotations

import unicodedata
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import transaction

from campaigns import signals
from campaigns.models import Membership, Role, Team

# --- Teams ---------------------------------------------------------------------------------


def check_team_name(*, name: str, team: Team | None = None) -> None:
    """A team's name is given and names no other team."""
    name = name.strip()
    if not name:
        raise ValidationError({"name": "the team needs a name"})
    if any(unicodedata.category(c) == "Cc" for c in name):
        # A line break in a name broke every export's file name (issue 32).
        raise ValidationError({"name": "one line of text: no line breaks or control characters"})
    others = Team.objects.filter(name=name)
    if team is not None and team.pk is not None:
        others = others.exclude(pk=team.pk)
    if others.exists():
        raise ValidationError({"name": f"a team named {name!r} exists already"})


@transaction.atomic
def create_team(*, name: str, acting_user: User | None = None) -> Team:
    """A new team, without members (its owners are added with `add_member`)."""
    check_team_name(name=name)
    team = Team(name=name.strip())
    team.full_clean()
    team.save()
    # The ledger gives it its default alert channel, in this transaction.
    signals.team_created.send(sender=Team, team=team)
    return team


@transaction.atomic
def ensure_team(*, name: str, acting_user: User | None = None) -> tuple[Team, bool]:
    """The team named `name`, created if missing (for idempotent commands); True if created."""
    existing = Team.objects.select_for_update().filter(name=name.strip()).first()
    if existing is not None:
        return existing, False
    return create_team(name=name, acting_user=acting_user), True


@transaction.atomic
def rename_team(*, team: Team, name: str, acting_user: User | None = None) -> Team:
    locked = Team.objects.select_for_update().get(pk=team.pk)
    check_team_name(name=name, team=locked)
    locked.name = name.strip()
    locked.full_clean()
    locked.save(update_fields=["name"])
    return locked


@transaction.atomic
def delete_team(*, team: Team, acting_user: User | None = None) -> None:
    """Remove a team with everything it owns (superusers only: the caller checked)."""
    Team.objects.filter(pk=team.pk).delete()


# --- Members -------------------------------------------------------------------------------


def check_role(*, role: str) -> None:
    if role not in Role.values:
        raise ValidationError({"role": f"role must be one of {', '.join(Role.values)}"})


def check_add_member(*, team: Team, member: Any) -> None:
    """One role per member and team: a second membership is refused, naming the member."""
    if Membership.objects.filter(team_id=team.pk, user_id=member.pk).exists():
        raise ValidationError(
            {"member": f"{member.get_username()} is already a member of {team}: change the role"}
        )


@transaction.atomic
def add_member(
    *, team: Team, member: Any, role: str = Role.PLANNER, acting_user: User | None = None
) -> Membership:
    check_role(role=role)
    locked = Team.objects.select_for_update().get(pk=team.pk)
    check_add_member(team=locked, member=member)
    return Membership.objects.create(team=locked, user=member, role=role)


@transaction.atomic
def change_role(
    *, membership: Membership, role: str, acting_user: User | None = None
) -> Membership:
    check_role(role=role)
    locked = Membership.objects.select_for_update().get(pk=membership.pk)
    if locked.role != role:
        locked.role = role
        locked.save(update_fields=["role"])
    return locked


@transaction.atomic
def remove_member(*, membership: Membership, acting_user: User | None = None) -> None:
    Membership.objects.filter(pk=membership.pk).delete()


@transaction.atomic
def set_member(
    *, team: Team, member: Any, role: str, acting_user: User | None = None
) -> Membership:
    """`member` has `role` in `team`, added if not yet a member (for idempotent commands)."""
    existing = Membership.objects.filter(team_id=team.pk, user_id=member.pk).first()
    if existing is None:
        return add_member(team=team, member=member, role=role, acting_user=acting_user)
    return change_role(membership=existing, role=role, acting_user=acting_user)


# --- Users ---------------------------------------------------------------------------------


@transaction.atomic
def provision_user(
    *, username: str, email: str = "", password: str | None = None
) -> tuple[Any, bool]:
    """The staff user `username`, created if missing; True if created.

    Members plan in the admin, so they are staff; what they see is scoped by team. A new user
    gets `password` or, without one, no usable password (they set it with `changepassword`);
    an existing user's password changes only when `password` is given. A non-empty `email`
    replaces the stored address (alerts reach owners there, docs/domain.md §19)."""
    user, created = get_user_model().objects.select_for_update().get_or_create(username=username)
    if password is not None:
        user.set_password(password)
    elif created:
        user.set_unusable_password()
    if email:
        user.email = email
    user.is_staff = True
    user.save()
    return user, created
