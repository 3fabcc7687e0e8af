"""Filters the artifacts browser's templates use (docs/domain.md §23.4)."""

from __future__ import annotations

from django import template

from campaigns.domain import artifact_tree as artifacts

register = template.Library()


@register.filter
def bytes_in_words(size: int) -> str:
    return artifacts.size_in_words(int(size))


@register.filter
def artifact_name(path: str) -> str:
    """The file's own name (its folders are the tree's)."""
    return str(path).rsplit("/", 1)[-1]
