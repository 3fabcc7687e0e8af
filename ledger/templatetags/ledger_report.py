"""Filters for the closing report's templates."""

from __future__ import annotations

from typing import Any

from django import template

register = template.Library()


@register.filter
def md_cell(value: Any) -> str:
    """A value safe inside a Markdown table cell: no pipe or line break may end the cell."""
    if value is None or value == "":
        return "—"
    text = str(value).replace("\\", "\\\\").replace("|", "\\|")
    return " ".join(text.split())


@register.filter
def md_text(value: Any) -> str:
    """Free text on one Markdown line (notes and rationales are written on several)."""
    if value is None:
        return ""
    return " ".join(str(value).split())


@register.filter
def yes_no(value: Any) -> str:
    if value is None:
        return "not checked"
    return "yes" if value else "no"
