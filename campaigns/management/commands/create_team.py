from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.core.validators import validate_email
from django.db import transaction

from campaigns.models import Membership, Role, Team


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
        parsed = []
        for spec in options["member"]:
            username, _, rest = spec.partition(":")
            role, _, email = rest.partition(":")
            role = role or Role.PLANNER
            if not username:
                raise CommandError(f"--member {spec!r}: a username comes first")
            if role not in Role.values:
                raise CommandError(
                    f"--member {spec!r}: role must be one of {', '.join(Role.values)}"
                )
            if email:
                try:
                    validate_email(email)
                except ValidationError as exc:
                    raise CommandError(
                        f"--member {spec!r}: {email!r} is not an email address"
                    ) from exc
            parsed.append((username, role, email))
        team, created = Team.objects.get_or_create(name=name)
        self.stdout.write(f"{'Created' if created else 'Using'} team {team.name!r} (id {team.pk}).")
        User = get_user_model()
        for username, role, email in parsed:
            user, new_user = User.objects.get_or_create(username=username)
            if new_user:
                user.set_unusable_password()
            if email:
                user.email = email
            # Members plan in the admin, so they are staff; what they see is scoped by team.
            user.is_staff = True
            user.save()
            Membership.objects.update_or_create(team=team, user=user, defaults={"role": role})
            note = " (new user: set a password with `manage.py changepassword`)" if new_user else ""
            self.stdout.write(f"  {username}: {role}{note}")
