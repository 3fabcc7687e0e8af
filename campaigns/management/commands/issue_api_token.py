"""`manage.py issue_api_token USERNAME [--name NAME]`: a new API token for a user, printed once
(only its digest is stored: docs/domain.md §26). It replaces DRF's `drf_create_token`, whose
table kept the key in clear."""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser

from campaigns.services.keys import issue_api_token


class Command(BaseCommand):
    help = "Issue an API token for a user and print it (shown once): USERNAME [--name NAME]"

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("username")
        parser.add_argument("--name", default="", help="What the token is for.")

    def handle(self, *args: Any, **options: Any) -> None:
        user = get_user_model().objects.filter(username=options["username"]).first()
        if user is None:
            raise CommandError(f"no user {options['username']!r}")
        _token, raw = issue_api_token(owner=user, name=options["name"])
        # Only the token on stdout, so `TOKEN=$(manage.py issue_api_token olga)` works.
        self.stdout.write(raw)
