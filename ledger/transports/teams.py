"""Microsoft Teams through a Workflows webhook ("When a Teams webhook request is received" →
post a card; docs/domain.md §19.6; the Office 365 connectors are retired): a `message` whose one
attachment is an Adaptive Card 1.5. User text goes only into `TextRun`s of `RichTextBlock`s,
which Adaptive Cards never parse as Markdown, so a title cannot carry a disguised link; the
card's own words (the kind's label) are Markdown-escaped where a `TextBlock` holds them."""

from __future__ import annotations

import json
from typing import Any

from ledger.domain.chat_text import cut, markdown_inert
from ledger.domain.notices import Notice
from ledger.models import AlertChannel
from ledger.transports import post


def _runs(*parts: tuple[str, bool]) -> dict[str, Any]:
    """A RichTextBlock of text runs (text, bold)."""
    inlines = [
        {"type": "TextRun", "text": cut(text, 3000), **({"weight": "Bolder"} if bold else {})}
        for text, bold in parts
    ]
    return {"type": "RichTextBlock", "inlines": inlines}


def card(notice: Notice) -> dict[str, Any]:
    return {
        "$schema": "http://adaptivecards.io/schemas/adaptive-card.json",
        "type": "AdaptiveCard",
        "version": "1.5",
        "body": [
            {
                "type": "TextBlock",
                "text": markdown_inert(notice.kind_label),
                "weight": "Bolder",
                "size": "Medium",
                "wrap": True,
            },
            _runs((notice.message, False)),
            _runs(("Campaign: ", True), (f"#{notice.campaign_id} {notice.campaign_title}", False)),
            _runs(("Team: ", True), (notice.team_name, False)),
            _runs(("Raised: ", True), (notice.raised, False)),
        ],
    }


def payload(notice: Notice) -> dict[str, Any]:
    attachment = {
        "contentType": "application/vnd.microsoft.card.adaptive",
        "contentUrl": None,
        "content": card(notice),
    }
    return {"type": "message", "attachments": [attachment]}


def send(channel: AlertChannel, notice: Notice) -> int | None:
    return post(channel.target, json.dumps(payload(notice)).encode(), {})
