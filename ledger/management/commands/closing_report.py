"""`manage.py closing_report CAMPAIGN_ID --format html|markdown|json [--output FILE]`.

Synchronous: it builds the report from the database as it stands and writes one rendering, to
the file or to standard output. Nothing is stored; `POST /campaigns/{id}/reports/` stores them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from campaigns.models import Campaign
from ledger.rendering.closing_report import FORMATS, render
from ledger.selectors.closing_report import collect


class Command(BaseCommand):
    help = "Write the closing report of a campaign as HTML, Markdown or JSON."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("campaign_id", type=int)
        parser.add_argument("--format", choices=FORMATS, default="markdown")
        parser.add_argument("--output", "-o", help="File to write (default: standard output).")

    def handle(self, *args: Any, **options: Any) -> None:
        campaign = (
            Campaign.objects.select_related("team", "committed_by")
            .filter(pk=options["campaign_id"])
            .first()
        )
        if campaign is None:
            raise CommandError(f"no campaign with id {options['campaign_id']}")
        content = render(collect(campaign), options["format"])
        if options["output"]:
            target = Path(options["output"])
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(content, encoding="utf-8")
            self.stderr.write(
                f"Wrote the {options['format']} closing report of campaign {campaign.pk} "
                f"to {target}."
            )
        else:
            self.stdout.write(content, ending="")
