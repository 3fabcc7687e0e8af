"""Slack's and Teams' messages carry user text inert (issue 32: `<!channel>` and a disguised link
arrived live; docs/domain.md §19.6), checked with the products' own SDKs: Slack's `slack_sdk`
block models, Microsoft's Adaptive Cards SDK (npm `adaptivecards`, run by node; skipped, visibly,
where node or the package is missing: `npm install --prefix tests/adaptive_cards`)."""

from __future__ import annotations

import html
import json
import shutil
import subprocess
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from slack_sdk.models.blocks import Block

from ledger.domain.chat_text import markdown_inert, one_line, slack_escape
from ledger.domain.notices import Notice
from ledger.transports import slack, teams

HOSTILE = "<!channel> see <http://evil.example|the report> & <@U123> [ok](http://evil.example)"
CARDS = Path(__file__).resolve().parents[2] / "tests" / "adaptive_cards"


def _notice(title: str = HOSTILE, message: str = HOSTILE) -> Notice:
    return Notice(
        delivery_id="d-1", alert_id=1, kind="run_stopped", kind_label="Run stopped",
        message=message, campaign_id=7, campaign_title=title, team_id=3,
        team_name="nlp <!here>", raised_at=datetime(2026, 12, 3, 9, 30, tzinfo=UTC),
    )  # fmt: skip


def _mrkdwn_texts(payload: dict[str, Any]) -> list[str]:
    found = [payload["text"]]
    for block in payload["blocks"]:
        for text in [block.get("text"), *block.get("elements", [])]:
            if text and text.get("type") == "mrkdwn":
                found.append(text["text"])
    return found


def test_the_slack_message_is_valid_block_kit_with_no_live_mention_or_link() -> None:
    payload = slack.payload(_notice())
    for block in payload["blocks"]:
        Block.parse(block).validate_json()  # slack_sdk raises on a malformed block
    for text in _mrkdwn_texts(payload):
        assert "<" not in text and ">" not in text, text
        assert "&lt;!channel&gt;" in text or "&lt;!here&gt;" in text
    assert all(b["text"]["verbatim"] for b in payload["blocks"] if b["type"] == "section")
    # What Slack shows once it decodes its three entities is the text as stored.
    assert html.unescape(payload["blocks"][1]["text"]["text"]) == HOSTILE


@given(st.text())
def test_slack_escape_leaves_no_angle_bracket_and_decodes_back(text: str) -> None:
    escaped = slack_escape(text, limit=10**6)
    assert "<" not in escaped and ">" not in escaped
    assert escaped.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&") == text


@given(st.text())
def test_markdown_inert_and_one_line(text: str) -> None:
    inert = markdown_inert(text, limit=10**6)
    assert "](" not in inert.replace("\\]\\(", "")
    assert "\n" not in one_line(text) and "\r" not in one_line(text)


def _microsoft_parse(card: dict[str, Any]) -> dict[str, Any]:
    if shutil.which("node") is None or not (CARDS / "node_modules" / "adaptivecards").is_dir():
        pytest.skip("needs node and `npm install --prefix tests/adaptive_cards`")
    done = subprocess.run(
        ["node", str(CARDS / "check.js")], input=json.dumps(card), capture_output=True,
        text=True, timeout=60, check=True,
    )  # fmt: skip
    parsed: dict[str, Any] = json.loads(done.stdout)
    return parsed


def test_the_teams_card_is_valid_and_user_text_is_only_in_text_runs() -> None:
    payload = teams.payload(_notice())
    [attachment] = payload["attachments"]
    assert attachment["contentType"] == "application/vnd.microsoft.card.adaptive"
    card = attachment["content"]
    read = _microsoft_parse(card)
    assert read["events"] == []  # no unknown element, no invalid property
    assert read["card"]["version"] == "1.5" and len(read["card"]["body"]) == len(card["body"])
    # User text reaches the card only as TextRuns, which Adaptive Cards never parse as Markdown.
    runs = [i["text"] for b in card["body"] if b["type"] == "RichTextBlock" for i in b["inlines"]]
    assert HOSTILE in runs and any("nlp <!here>" in r for r in runs)
    blocks = [b["text"] for b in card["body"] if b["type"] == "TextBlock"]
    assert all(HOSTILE not in text and "[ok]" not in text for text in blocks)


def test_a_title_with_a_line_break_stays_one_mail_subject_line() -> None:
    subject = one_line("[Campaign Desk] Budget: LoRA\r\nBcc: all@example.org")
    assert "\n" not in subject and "\r" not in subject and "Bcc: all@example.org" in subject
