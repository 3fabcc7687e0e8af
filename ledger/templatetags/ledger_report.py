"""Filters for the closing report's templates.

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

from django import template
from django.utils.safestring import SafeString, mark_safe

from ledger.rendering.markdown_text import inert

register = template.Library()


@register.filter
def md_cell(value: Any) -> SafeString:
    """A value safe inside a Markdown table cell: no pipe or line break may end the cell."""
    if value is None or value == "":
        return mark_safe("—")
    text = inert(str(value)).replace("|", "\\|")
    return mark_safe(" ".join(text.split()))  # inert: nothing left to escape


@register.filter
def md_text(value: Any) -> SafeString:
    """Free text on one Markdown line (notes and rationales are written on several)."""
    if value is None:
        return mark_safe("")
    return mark_safe(" ".join(inert(str(value)).split()))  # inert: nothing left to escape


@register.filter
def yes_no(value: Any) -> str:
    if value is None:
        return "not checked"
    return "yes" if value else "no"
