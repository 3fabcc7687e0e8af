from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser

from campaigns.models import Campaign, PlannedItem, RunKind
from campaigns.services.keys import issue_ingest_key


class Command(BaseCommand):
    help = (
        "Issue an ingest key for a campaign and print it (shown once), e.g. for a CI job: "
        "CAMPAIGN_ID [--item ID] [--kind KIND] [--name NAME]"
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("campaign_id", type=int)
        parser.add_argument("--item", type=int, help="Bind the key to this planned item (id).")
        parser.add_argument(
            "--kind", default="", help=f"Default run kind: {', '.join(RunKind.values)}."
        )
        parser.add_argument("--name", default="training loop", help="What the key is for.")

    def handle(self, *args: Any, **options: Any) -> None:
        campaign = Campaign.objects.filter(pk=options["campaign_id"]).first()
        if campaign is None:
            raise CommandError(f"no campaign {options['campaign_id']}")
        item = None
        if options["item"] is not None:
            item = PlannedItem.objects.filter(pk=options["item"]).first()
            if item is None:
                raise CommandError(f"--item: no planned item {options['item']}")
        try:
            _key, raw = issue_ingest_key(
                campaign=campaign, name=options["name"], item=item, kind=options["kind"]
            )
        except ValidationError as exc:
            problems = "; ".join(f"--{f}: {' '.join(m)}" for f, m in exc.message_dict.items())
            raise CommandError(problems) from exc
        # Only the key on stdout, so `KEY=$(manage.py issue_ingest_key 3)` works.
        self.stdout.write(raw)
