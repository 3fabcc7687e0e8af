"""Team roles from an identity provider's groups (pure: no Django, no I/O; README "Single
sign-on").

`OIDC_TEAM_ROLES` maps groups to a team and a role, entries separated by commas (or new lines):

    team-a:owner=desk-a-owners, team-a:planner=desk-a|ml-platform, team-b:viewer=all-staff

(`TEAM:ROLE=GROUP[|GROUP…]`; roles `viewer`, `planner`, `owner`). A user is given, in each team
of the mapping, the highest role one of their groups grants; a team of the mapping none of
their groups names is taken away from them; teams outside the mapping are left as they are (a
local owner may add people by hand).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Final

ROLE_ORDER: Final = ("viewer", "planner", "owner")


def parse_team_roles(text: str) -> dict[str, dict[str, frozenset[str]]]:
    """team → role → groups; ValueError naming the entry that is not `TEAM:ROLE=GROUPS`."""
    found: dict[str, dict[str, frozenset[str]]] = {}
    for raw in text.replace("\n", ",").split(","):
        entry = raw.strip()
        if not entry:
            continue
        head, sep, groups = entry.partition("=")
        team, colon, role = head.strip().rpartition(":")
        names = frozenset(g.strip() for g in groups.split("|") if g.strip())
        if not (sep and colon and team.strip() and role.strip() in ROLE_ORDER and names):
            raise ValueError(
                f"OIDC_TEAM_ROLES: {entry!r} is not TEAM:ROLE=GROUP[|GROUP…] "
                f"with ROLE one of {', '.join(ROLE_ORDER)}"
            )
        roles = found.setdefault(team.strip(), {})
        roles[role.strip()] = roles.get(role.strip(), frozenset()) | names
    return found


def roles_for(
    groups: Iterable[str], mapping: Mapping[str, Mapping[str, frozenset[str]]]
) -> dict[str, str | None]:
    """For every team of the mapping, the highest role `groups` grant (None: no role)."""
    held = set(groups)
    answer: dict[str, str | None] = {}
    for team, roles in mapping.items():
        granted = [r for r in ROLE_ORDER if roles.get(r, frozenset()) & held]
        answer[team] = granted[-1] if granted else None
    return answer
