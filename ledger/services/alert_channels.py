"""Writing a team's chat channels for alerts (docs/domain.md §19.4): owners only (the caller
checked). The admin calls these."""

from __future__ import annotations

from typing import Any

from django.db import transaction

from campaigns.models import Team
from ledger.models import AlertChannel


@transaction.atomic
def add_alert_channel(
    *, team: Team, kind: str, url: str, name: str = "", user: Any = None
) -> AlertChannel:
    """A Slack or Teams webhook the team's alerts are posted to; ValidationError names the
    field (an unknown kind, a URL that is not https)."""
    from django.core.exceptions import ValidationError

    channel = AlertChannel(team=team, kind=kind, url=url.strip(), name=name.strip())
    channel.full_clean()
    if not channel.url.startswith("https://"):
        raise ValidationError({"url": "a chat webhook URL starts with https://"})
    channel.save()
    return channel


@transaction.atomic
def remove_alert_channel(*, channel: AlertChannel, user: Any = None) -> None:
    AlertChannel.objects.filter(pk=channel.pk).delete()
