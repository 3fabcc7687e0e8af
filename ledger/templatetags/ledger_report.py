"""Filters for the closing report's templates.

Text people typed (titles, names, notes, rationales) stays text in the Markdown report, however
it is later shown (docs/domain.md §16): `&`, `<` and `>` are written as HTML entities, so no tag
or `<scheme:…>` autolink forms, and `[`, `]` and `\\` are backslash-escaped, so no link, image
or reference definition forms, whatever its target (`javascript:` included). A renderer shows
the characters as typed. The HTML report is escaped by Django's templates.
"""

from __future__ import annotations

from typing import Any

from django import template

register = template.Library()

# Backslash first: the escapes added after it must not be escaped again.
_MARKDOWN_INERT = str.maketrans(
    {"\\": "\\\\", "&": "&amp;", "<": "&lt;", ">": "&gt;", "[": "\\[", "]": "\\]"}
)


def inert(text: str) -> str:
    """`text` with nothing a Markdown renderer would turn into HTML, a link or an image."""
    return text.translate(_MARKDOWN_INERT)


@register.filter
def md_cell(value: Any) -> str:
    """A value safe inside a Markdown table cell: no pipe or line break may end the cell."""
    if value is None or value == "":
        return "—"
    text = inert(str(value)).replace("|", "\\|")
    return " ".join(text.split())


@register.filter
def md_text(value: Any) -> str:
    """Free text on one Markdown line (notes and rationales are written on several)."""
    if value is None:
        return ""
    return " ".join(inert(str(value)).split())


@register.filter
def yes_no(value: Any) -> str:
    if value is None:
        return "not checked"
    return "yes" if value else "no"
