"""`manage.py create_team NAME --member USERNAME[:ROLE[:EMAIL]] …`: a team (or more members for
it) and any missing users, through campaigns/services/teams.py like the team admin. Idempotent:
an existing member's role is set to the one given. New users get no usable password."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.core.validators import validate_email
from django.db import transaction

from campaigns.models import Role
from campaigns.services import teams


def parse_member(spec: str) -> tuple[str, str, str]:
    """`USERNAME[:ROLE[:EMAIL]]` as (username, role, email); a bad part names the spec."""
    username, _, rest = spec.partition(":")
    role, _, email = rest.partition(":")
    role = role or Role.PLANNER
    if not username:
        raise CommandError(f"--member {spec!r}: a username comes first")
    if role not in Role.values:
        raise CommandError(f"--member {spec!r}: role must be one of {', '.join(Role.values)}")
    if email:
        try:
            validate_email(email)
        except ValidationError as exc:
            raise CommandError(f"--member {spec!r}: {email!r} is not an email address") from exc
    return username, role, email


class Command(BaseCommand):
    help = "Create a team (or add to it) and any missing users: --member USERNAME[:ROLE[:EMAIL]] …"

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("name")
        parser.add_argument(
            "--member",
            action="append",
            default=[],
            metavar="USERNAME[:ROLE[:EMAIL]]",
            help="ROLE is viewer, planner (default) or owner; EMAIL is where alerts reach an "
            "owner; repeat for several members.",
        )

    @transaction.atomic
    def handle(self, *args: Any, **options: Any) -> None:
        name = options["name"].strip()
        if not name:
            raise CommandError("the team needs a name")
        members = [parse_member(spec) for spec in options["member"]]
        team, created = teams.ensure_team(name=name)
        self.stdout.write(f"{'Created' if created else 'Using'} team {team.name!r} (id {team.pk}).")
        for username, role, email in members:
            user, new_user = teams.provision_user(username=username, email=email)
            teams.set_member(team=team, member=user, role=role)
            note = " (new user: set a password with `manage.py changepassword`)" if new_user else ""
            self.stdout.write(f"  {username}: {role}{note}")
