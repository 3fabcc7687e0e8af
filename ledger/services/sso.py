"""Single sign-on's writes (README "Single sign-on"; the role rule is `ledger.domain.sso_roles`).

- `sign_in_identity`: the local user a provider account (issuer + subject) signs in as. Found
  only through its `OidcIdentity` row; a new provider account gets a new user (a username of
  its own: never an existing account's), unless the signed-in user asked to link it
  (`link_to`). Superusers and inactive users never sign in through the provider. The e-mail is
  taken at creation only: the provider does not rewrite it later.
- `apply_groups`: team roles from the groups claim through `OIDC_TEAM_ROLES`, written by
  campaigns/services/teams.py. Teams outside
  the mapping get nothing; the mapping takes away only roles it gave (`granted_roles`).
- `revoke_api_tokens`: a session the provider no longer vouches for loses its tokens too.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser, User
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.utils import timezone

from campaigns.models import ApiToken, Membership, Team
from campaigns.services import teams
from campaigns.services.campaigns import real_user
from ledger.domain.sso_roles import parse_team_roles, roles_for
from ledger.models import OidcIdentity

ActingUser = AbstractBaseUser | AnonymousUser | None


def _free_username(wanted: str) -> str:
    """`wanted`, or `wanted-2`, `wanted-3`…: a name no account has (never an existing one)."""
    users = get_user_model().objects
    base = (wanted.strip() or "sso-user")[:140]
    name, n = base, 1
    while users.filter(username__iexact=name).exists():
        n += 1
        name = f"{base}-{n}"
    return name


def _new_user(claims: Mapping[str, Any]) -> Any:
    username = _free_username(str(claims.get("preferred_username") or claims.get("sub") or ""))
    user = get_user_model().objects.create_user(username, email=str(claims.get("email") or ""))
    user.set_unusable_password()
    user.save(update_fields=["password"])
    return user


@transaction.atomic
def sign_in_identity(
    *,
    issuer: str,
    subject: str,
    claims: Mapping[str, Any],
    groups: Iterable[str],
    link_to: Any = None,
    acting_user: ActingUser = None,
) -> Any:
    """The user the provider account `issuer` + `subject` signs in as; PermissionDenied when
    it may not (a superuser, an inactive user, an identity linked to someone else)."""
    identity = (
        OidcIdentity.objects.select_for_update().filter(issuer=issuer, subject=subject).first()
    )
    if identity is None:
        user = link_to if link_to is not None else _new_user(claims)
        if user.is_superuser:
            raise PermissionDenied("a superuser cannot sign in through the identity provider")
        identity = OidcIdentity.objects.create(issuer=issuer, subject=subject, user=user)
    elif link_to is not None and identity.user_id != link_to.pk:
        raise PermissionDenied("this provider account is linked to another user")
    user = identity.user
    if user.is_superuser or not user.is_active:
        raise PermissionDenied("this user cannot sign in through the identity provider")
    user.first_name = str(claims.get("given_name") or user.first_name or "")[:150]
    user.last_name = str(claims.get("family_name") or user.last_name or "")[:150]
    user.save(update_fields=["first_name", "last_name"])
    identity.last_sign_in_at = timezone.now()
    identity.save(update_fields=["last_sign_in_at"])
    apply_groups(identity=identity, groups=groups, acting_user=acting_user)
    return user


@transaction.atomic
def apply_groups(
    *, identity: OidcIdentity, groups: Iterable[str], acting_user: ActingUser = None
) -> dict[str, str | None]:
    """Set the identity's user's role in each mapped team from `groups`; staff while they hold
    any membership. A membership given by hand is left as it is; one the mapping gave and no
    longer grants is removed. Unknown teams of the mapping are skipped."""
    mapping = parse_team_roles(getattr(settings, "OIDC_TEAM_ROLES", "") or "")
    wanted = roles_for(groups, mapping)
    user, granted = identity.user, dict(identity.granted_roles or {})
    for team in Team.objects.filter(name__in=list(wanted)):
        _apply_role(user, team, wanted[team.name], granted, real_user(acting_user))
    identity.granted_roles = granted
    identity.save(update_fields=["granted_roles"])
    staff = Membership.objects.filter(user=user).exists()
    if user.is_staff != staff:
        user.is_staff = staff
        user.save(update_fields=["is_staff"])
    return wanted


def _apply_role(
    user: Any, team: Team, role: str | None, granted: dict[str, str], acting_user: User | None
) -> None:
    """The mapping's role for `user` in `team`, written through the team services."""
    key = str(team.pk)
    held = Membership.objects.select_for_update().filter(team=team, user=user).first()
    by_hand = held is not None and granted.get(key) != held.role
    if by_hand:
        granted.pop(key, None)
    elif role is None:
        if held is not None:
            teams.remove_member(membership=held, acting_user=acting_user)
        granted.pop(key, None)
    elif held is None:
        teams.add_member(team=team, member=user, role=role, acting_user=acting_user)
        granted[key] = role
    else:
        teams.change_role(membership=held, role=role, acting_user=acting_user)
        granted[key] = role


@transaction.atomic
def revoke_api_tokens(*, user: Any, acting_user: ActingUser = None) -> int:
    """Delete every API token of `user`; how many there were."""
    deleted, _ = ApiToken.objects.filter(user=user).delete()
    return deleted
