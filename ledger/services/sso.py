"""Applying the identity provider's groups to a user's team memberships (README "Single
sign-on"; the rule is `ledger.domain.sso_roles`). Called at each OIDC sign-in."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.conf import settings
from django.db import transaction

from campaigns.models import Membership, Team
from ledger.domain.sso_roles import parse_team_roles, roles_for


@transaction.atomic
def apply_groups(*, user: Any, groups: Iterable[str]) -> dict[str, str | None]:
    """Set the user's role in each mapped team (creating, changing or removing the membership);
    staff while they hold any membership, so that the admin lets them in. Unknown teams of the
    mapping are skipped (teams are created by their owners, not by a sign-in)."""
    mapping = parse_team_roles(getattr(settings, "OIDC_TEAM_ROLES", "") or "")
    wanted = roles_for(groups, mapping)
    teams = {t.name: t for t in Team.objects.filter(name__in=list(wanted))}
    for name, role in wanted.items():
        team = teams.get(name)
        if team is None:
            continue
        if role is None:
            Membership.objects.filter(team=team, user=user).delete()
        else:
            Membership.objects.update_or_create(team=team, user=user, defaults={"role": role})
    staff = Membership.objects.filter(user=user).exists() or user.is_superuser
    if user.is_staff != staff:
        user.is_staff = staff
        user.save(update_fields=["is_staff"])
    return wanted
