"""Client-chosen identifiers (a corpus revision, a GPU lot, a metric key): taken exactly as
sent, so two that read alike are never two different names. The API's fields state the rule in
their schema (campaigns/api/fields.py); the metric batch's refusals name it per point."""

from __future__ import annotations

import re

from catalog.domain.display_text import bidi_refusal

#: No surrounding whitespace, no control characters (C0, DEL, C1) and no bidirectional
#: controls (U+202A-U+202E, U+2066-U+2069: catalog/domain/display_text.py) anywhere.
_NOT_CONTROL = r"\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069"
IDENTIFIER_PATTERN = rf"^(?:[^\s{_NOT_CONTROL}](?:[^{_NOT_CONTROL}]*[^\s{_NOT_CONTROL}])?)?$"


def identifier_problem(value: str) -> str:
    """Why `value` cannot be a client-chosen identifier ("" when it can): it is compared and
    looked up as sent, so invisible differences ("run\\n", " loss") would make two names that
    read alike. The rule is IDENTIFIER_PATTERN, which the schema states."""
    if re.fullmatch(IDENTIFIER_PATTERN, value):
        return ""
    if value != value.strip():
        return "No leading or trailing whitespace: identifiers are taken exactly as sent."
    refusal = bidi_refusal(value)
    if refusal:
        return refusal
    return "No control characters (tabs, newlines, NUL...): identifiers are printable text."
