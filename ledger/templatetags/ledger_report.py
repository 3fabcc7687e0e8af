"""Filters for the closing report's templates: `md_text` and `md_cell` make text people typed
inert in the Markdown report (the rule is ledger/rendering/markdown_text.py's, docs/domain.md
§16), `yes_no` words a check."""

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
