"""Text made inert for the closing report's Markdown (its template filters are
ledger/templatetags/ledger_report.py).

Text people typed (titles, names, notes, rationales) stays text in the Markdown report, however
it is later shown (docs/domain.md §16): `&`, `<` and `>` are written as HTML entities, so no tag
or `<scheme:…>` autolink forms, and `[`, `]` and `\\` are backslash-escaped, so no link, image
or reference definition forms, whatever its target (`javascript:` included). A renderer shows
the characters as typed. The HTML report is escaped by Django's templates.

Every string of the report's data reaches the Markdown template as a `MarkdownText`, and the
template autoescapes: a value shown without `md_text` or `md_cell` (a currency, a checkpoint
component a planner typed in the admin) is made inert all the same, rather than each field
having to remember its filter.
"""

from __future__ import annotations

from typing import Any

# Backslash first: the escapes added after it must not be escaped again.
_MARKDOWN_INERT = str.maketrans(
    {"\\": "\\\\", "&": "&amp;", "<": "&lt;", ">": "&gt;", "[": "\\[", "]": "\\]"}
)


def inert(text: str) -> str:
    """`text` with nothing a Markdown renderer would turn into HTML, a link or an image."""
    return text.translate(_MARKDOWN_INERT)


class MarkdownText(str):
    """A string of the report's data: Django's autoescape shows it through `__html__`."""

    def __html__(self) -> str:
        # On one line, and no pipe may end a table cell (`\|` shows as `|` anywhere).
        return " ".join(inert(self).replace("|", "\\|").split())


def as_markdown_text(value: Any) -> Any:
    """`value` (the report's JSON-like data) with every string a MarkdownText."""
    if isinstance(value, str):
        return MarkdownText(value)
    if isinstance(value, dict):
        return {key: as_markdown_text(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [as_markdown_text(item) for item in value]
    return value
