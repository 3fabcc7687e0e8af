"""A JSON webhook signed as Standard Webhooks specifies (docs/domain.md §19.3; the
`standardwebhooks` library signs): headers `webhook-id` (the delivery id, the same on every
attempt: the receiver drops a repeat), `webhook-timestamp` (Unix seconds of this attempt: a
receiver refuses one older than its tolerance, so a captured request cannot be replayed later)
and `webhook-signature` (`v1,<base64 HMAC-SHA256 of "id.timestamp.body">`, keyed by the
channel's secret). The body is `ledger.domain.notices.webhook_body`."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from standardwebhooks.webhooks import Webhook

from ledger.domain.notices import Notice, webhook_body
from ledger.models import AlertChannel
from ledger.transports import Refused, post


def signed_headers(secret: str, msg_id: str, body: str, now: datetime) -> dict[str, str]:
    return {
        "webhook-id": msg_id,
        "webhook-timestamp": str(int(now.timestamp())),
        "webhook-signature": Webhook(secret).sign(msg_id, now, body),
    }


def send(channel: AlertChannel, notice: Notice) -> int | None:
    if not channel.secret:
        raise Refused("the webhook has no secret to sign with")
    body = json.dumps(webhook_body(notice), sort_keys=True)
    headers = signed_headers(channel.secret, notice.delivery_id, body, datetime.now(UTC))
    return post(channel.target, body.encode(), headers)
