"""Writing a team's alert channels (docs/domain.md §19.4): owners only (the admin and the API
check the role before calling). Every URL passes the one address policy the delivery applies
again (`campaigns.outbound.check_webhook_url`: https, public addresses only); a webhook's
secret is Standard Webhooks' `whsec_<base64>` (generated when none is given, and then shown
once); Teams' retired Office 365 connector URLs are refused with the way to a Workflows one.
"""

from __future__ import annotations

import base64
import secrets
from typing import Any
from urllib.parse import urlsplit

from django.core.exceptions import ValidationError
from django.core.validators import validate_email
from django.db import transaction

from campaigns import outbound
from campaigns.models import Team
from ledger.domain import alerts
from ledger.models import AlertChannel, ChannelKind

URL_KINDS = frozenset({ChannelKind.WEBHOOK, ChannelKind.SLACK, ChannelKind.TEAMS})
SECRET_PREFIX = "whsec_"


def new_secret() -> str:
    return SECRET_PREFIX + base64.b64encode(secrets.token_bytes(24)).decode()


def as_signing_secret(given: str) -> str:
    """A secret in Standard Webhooks' form: a `whsec_` value must decode; any other text (an
    older team secret) becomes the key made of its UTF-8 bytes, `whsec_` + base64 of them."""
    if given.startswith(SECRET_PREFIX):
        try:
            if base64.b64decode(given[len(SECRET_PREFIX) :] + "==", validate=False):
                return given
        except ValueError:
            pass
        raise ValidationError({"secret": "A whsec_ secret must be base64 after its prefix."})
    if len(given) < 16:
        raise ValidationError({"secret": "A signing secret has at least 16 characters."})
    return SECRET_PREFIX + base64.b64encode(given.encode()).decode()


def check_target(kind: str, target: str) -> None:
    """ValidationError naming `target` when the channel could not be delivered to."""
    if kind == ChannelKind.EMAIL:
        if target:
            validate_email(target)
        return
    if not target:
        raise ValidationError({"target": "This channel needs its webhook URL."})
    try:
        outbound.check_webhook_url(target)
    except outbound.WebhookRefused as exc:
        raise ValidationError({"target": f"This URL is refused: {exc}."}) from exc
    host = (urlsplit(target).hostname or "").lower()
    if kind == ChannelKind.TEAMS and (
        host.endswith(".webhook.office.com") or "/webhookb2/" in target
    ):
        raise ValidationError(
            {
                "target": "Office 365 connectors are retired: in Teams, add the Workflows "
                "template “Post to a channel when a webhook request is received” and paste "
                "its URL."
            }
        )


def check_muted(muted: list[str]) -> list[str]:
    unknown = sorted(set(muted) - set(alerts.KINDS))
    if unknown:
        raise ValidationError({"muted_kinds": f"Unknown alert kinds: {', '.join(unknown)}."})
    return sorted(set(muted))


@transaction.atomic
def add_alert_channel(
    *,
    team: Team,
    kind: str,
    target: str = "",
    name: str = "",
    secret: str = "",
    muted_kinds: list[str] | None = None,
    acting_user: Any = None,
) -> tuple[AlertChannel, str | None]:
    """Add a channel; the channel and the secret to show once (when one was generated)."""
    if kind not in ChannelKind.values:
        raise ValidationError({"kind": f"One of {', '.join(ChannelKind.values)}."})
    target = target.strip()
    check_target(kind, target)
    shown = None
    if kind == ChannelKind.WEBHOOK:
        shown = None if secret else new_secret()
        secret = as_signing_secret(secret) if secret else str(shown)
    else:
        secret = ""
    muted = alerts.default_muted() if muted_kinds is None else check_muted(muted_kinds)
    channel = AlertChannel(
        team=team, kind=kind, target=target, name=name.strip(), secret=secret, muted_kinds=muted
    )
    channel.full_clean()
    channel.save()
    return channel, shown


@transaction.atomic
def change_alert_channel(
    *,
    channel: AlertChannel,
    name: str | None = None,
    target: str | None = None,
    secret: str | None = None,
    muted_kinds: list[str] | None = None,
    acting_user: Any = None,
) -> AlertChannel:
    """Rename, re-point, re-key or mute kinds; the URL is checked again as at creation."""
    locked = AlertChannel.objects.select_for_update().get(pk=channel.pk)
    if target is not None:
        check_target(locked.kind, target.strip())
        locked.target = target.strip()
    if name is not None:
        locked.name = name.strip()
    if secret and locked.kind == ChannelKind.WEBHOOK:
        locked.secret = as_signing_secret(secret)
    if muted_kinds is not None:
        locked.muted_kinds = check_muted(muted_kinds)
    locked.full_clean()
    locked.save()
    return locked


@transaction.atomic
def remove_alert_channel(*, channel: AlertChannel, acting_user: Any = None) -> None:
    """Its deliveries stay listed (their channel then reads as removed; a due one is refused)."""
    AlertChannel.objects.filter(pk=channel.pk).delete()


@transaction.atomic
def add_owners_email(*, team: Team, acting_user: Any = None) -> AlertChannel:
    """A new team's default channel: e-mail to its owners (docs/domain.md §19.3)."""
    channel, _ = add_alert_channel(team=team, kind=ChannelKind.EMAIL, name="Owners")
    return channel
