"""The check a team's alert webhook passes before it is stored (docs/domain.md §19).

`services.set_team_webhook` calls it (the API's PATCH goes through it); the team admin form calls
it from its `clean()` so the refusal shows beside the field. Delivery checks again
(`campaigns.outbound`): a name's addresses may change after it was stored.
"""

from __future__ import annotations

from django.core.exceptions import ValidationError

from campaigns import outbound


def check_team_webhook(*, webhook_url: str, webhook_secret: str) -> None:
    """Raise ValidationError naming the field: the URL must be one the worker would POST to
    (https, public addresses only), and a webhook needs a secret to sign with."""
    if not webhook_url:
        return
    try:
        outbound.check_webhook_url(webhook_url)
    except outbound.WebhookRefused as exc:
        raise ValidationError({"webhook_url": f"This webhook URL is refused: {exc}."}) from exc
    if not webhook_secret:
        raise ValidationError(
            {"webhook_secret": "A webhook needs a secret: every alert POST is signed with it."}
        )
