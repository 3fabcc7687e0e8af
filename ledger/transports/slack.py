"""Slack incoming webhooks (docs/domain.md §19.6): `{"text", "blocks"}` as Block Kit documents
it, the text a notification's fallback, the blocks what the channel shows (a header, a section,
a context line). Every piece of user text is escaped (`slack_escape`: `&`, `<`, `>`), and the
mrkdwn objects are `verbatim`, so a title cannot mention `<!channel>` or disguise a link."""

from __future__ import annotations

import json
from typing import Any

from ledger.domain.chat_text import cut, slack_escape
from ledger.domain.notices import Notice
from ledger.models import AlertChannel
from ledger.transports import post


def _mrkdwn(text: str) -> dict[str, Any]:
    return {"type": "mrkdwn", "text": text, "verbatim": True}


def payload(notice: Notice) -> dict[str, Any]:
    context = (
        f"Team {notice.team_name} · campaign #{notice.campaign_id} {notice.campaign_title} · "
        f"{notice.raised}"
    )
    return {
        "text": slack_escape(f"{notice.title}: {notice.message}"),
        "blocks": [
            # plain_text is never parsed: the header needs no escape, only its length.
            {"type": "header", "text": {"type": "plain_text", "text": cut(notice.title, 150)}},
            {"type": "section", "text": _mrkdwn(slack_escape(notice.message))},
            {"type": "context", "elements": [_mrkdwn(slack_escape(context))]},
        ],
    }


def send(channel: AlertChannel, notice: Notice) -> int | None:
    return post(channel.target, json.dumps(payload(notice)).encode(), {})
