"""Alerts to chat channels: Slack incoming webhooks and Microsoft Teams webhooks (docs/domain.md
§19.4), beside e-mail and the signed webhook.

Payloads, as each product documents them:
- **Slack** (incoming webhook, `https://hooks.slack.com/services/…`): `{"text": …}` is the
  notification's fallback text, and `blocks` (Block Kit: a header, a `mrkdwn` section, a
  context line) is what the channel shows.
- **Teams** (a Workflows "post to a channel when a webhook request is received" URL, or a legacy
  incoming webhook): a `message` whose one attachment is an Adaptive Card (`contentType`
  `application/vnd.microsoft.card.adaptive`, card version 1.4).

`post_json(url, payload)` is the one outbound call, a plain function of (url, payload) so that
the outbound HTTP policy (address checks, timeouts) can wrap it in one place; it follows no
redirect.
"""

from __future__ import annotations

import json
from typing import Any

from django.conf import settings

from campaigns import outbound
from ledger.models import Alert, AlertChannel, ChannelKind


def _facts(alert: Alert) -> dict[str, str]:
    campaign = alert.campaign
    return {
        "title": f"{alert.get_kind_display()}: {campaign.title}",
        "message": alert.message,
        "campaign": f"#{campaign.pk} {campaign.title}",
        "team": str(campaign.team),
        "raised": f"{alert.raised_at:%Y-%m-%d %H:%M} UTC",
    }


def slack_payload(alert: Alert) -> dict[str, Any]:
    f = _facts(alert)
    return {
        "text": f"{f['title']}: {f['message']}",
        "blocks": [
            {"type": "header", "text": {"type": "plain_text", "text": f["title"][:150]}},
            {"type": "section", "text": {"type": "mrkdwn", "text": f["message"][:3000]}},
            {
                "type": "context",
                "elements": [
                    {
                        "type": "mrkdwn",
                        "text": f"Team {f['team']} · campaign {f['campaign']} · {f['raised']}",
                    }
                ],
            },
        ],
    }


def teams_payload(alert: Alert) -> dict[str, Any]:
    f = _facts(alert)
    card = {
        "$schema": "http://adaptivecards.io/schemas/adaptive-card.json",
        "type": "AdaptiveCard",
        "version": "1.4",
        "body": [
            {"type": "TextBlock", "text": f["title"], "weight": "Bolder", "size": "Medium",
             "wrap": True},
            {"type": "TextBlock", "text": f["message"], "wrap": True},
            {
                "type": "FactSet",
                "facts": [
                    {"title": "Team", "value": f["team"]},
                    {"title": "Campaign", "value": f["campaign"]},
                    {"title": "Raised", "value": f["raised"]},
                ],
            },
        ],
    }  # fmt: skip
    return {
        "type": "message",
        "attachments": [
            {
                "contentType": "application/vnd.microsoft.card.adaptive",
                "contentUrl": None,
                "content": card,
            }
        ],
    }


PAYLOADS = {ChannelKind.SLACK: slack_payload, ChannelKind.TEAMS: teams_payload}


def post_json(url: str, payload: dict[str, Any]) -> int:
    """POST `payload` as JSON through the one outbound sender (campaigns/outbound.py, docs/domain.md
    §19.4: public addresses only, pinned, no redirect, one deadline); the status (raises
    WebhookRefused or DeliveryFailed)."""
    deadline = float(getattr(settings, "ALERT_WEBHOOK_TIMEOUT", 10))
    headers = {"Content-Type": "application/json", "User-Agent": "campaign-desk-alerts"}
    return outbound.post(url, json.dumps(payload).encode(), headers, deadline=deadline).status


def deliver_to_channel(alert: Alert, channel: AlertChannel) -> int:
    return post_json(channel.url, PAYLOADS[ChannelKind(channel.kind)](alert))
