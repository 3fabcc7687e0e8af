"""Groups to team roles (ledger/domain/sso_roles.py), without a database."""

from __future__ import annotations

import pytest

from ledger.domain.sso_roles import parse_team_roles, roles_for

MAPPING = "desk-a:owner=desk-a-owners, desk-a:planner=ml|desk-a, desk-b:viewer=all-staff"


def test_the_highest_role_a_group_grants_and_none_elsewhere() -> None:
    mapping = parse_team_roles(MAPPING)
    assert roles_for(["ml", "desk-a-owners"], mapping) == {"desk-a": "owner", "desk-b": None}
    assert roles_for(["all-staff", "ml"], mapping) == {"desk-a": "planner", "desk-b": "viewer"}
    assert roles_for([], mapping) == {"desk-a": None, "desk-b": None}
    assert parse_team_roles("") == {}


@pytest.mark.parametrize("bad", ["desk-a=ml", "desk-a:boss=ml", ":owner=ml", "desk-a:owner="])
def test_a_bad_entry_is_named(bad: str) -> None:
    with pytest.raises(ValueError, match="TEAM:ROLE=GROUP"):
        parse_team_roles(f"desk-b:viewer=x, {bad}")
