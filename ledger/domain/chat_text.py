"""Untrusted text (campaign titles, run names, stop reasons, checkpoint locations) made inert for
the chat products that parse markup (pure; docs/domain.md §19.6).

- **Slack** parses `mrkdwn` in a message's `text` and in `mrkdwn` text objects: `<!channel>`
  notifies everyone, `<http://evil|ok>` shows "ok" and links elsewhere. Slack documents the
  escape: `&`, `<` and `>` as `&amp;`, `&lt;`, `&gt;` (decoded for display), so no `<…>`
  control sequence can be formed; the text objects are also `verbatim` (no auto-linking of
  names and mentions).
- **Teams** (Adaptive Cards) parses a Markdown subset in `TextBlock` and `FactSet` values
  (`[ok](http://evil)` is a link). A `TextRun` inside a `RichTextBlock` is never parsed as
  Markdown (the Adaptive Cards schema), so untrusted text goes only into text runs; what goes
  elsewhere (the card's title) is built from our own words and escaped with `markdown_inert`.

Lengths: Slack's section text takes 3,000 characters, a header 150; a card has no set limit
but a message over ~28 KB is refused by Teams, so text is cut at `limit` with an ellipsis.
"""

from __future__ import annotations

from typing import Final

SLACK_ESCAPES: Final = (("&", "&amp;"), ("<", "&lt;"), (">", "&gt;"))
# Characters the Adaptive Cards Markdown subset gives a meaning to.
MARKDOWN_SPECIAL: Final = frozenset("\\`*_{}[]()#+-.!<>|~")


def cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def slack_escape(text: str, limit: int = 3000) -> str:
    """`text` for a Slack mrkdwn field: no mention, link or channel reference survives."""
    text = cut(text, limit)
    for raw, escaped in SLACK_ESCAPES:
        text = text.replace(raw, escaped)
    return text


def markdown_inert(text: str, limit: int = 3000) -> str:
    """`text` for a Markdown-parsing field: every special character backslash-escaped."""
    return "".join("\\" + c if c in MARKDOWN_SPECIAL else c for c in cut(text, limit))


def one_line(text: str, limit: int = 200) -> str:
    """One line (control characters, CR and LF become spaces): a mail subject, a header."""
    line = " ".join("".join(c if c.isprintable() else " " for c in text).split())
    return cut(line, limit)
