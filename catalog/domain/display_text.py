"""Names people read refuse the Unicode bidirectional controls (docs/domain.md §25).

The embedding and override controls U+202A–U+202E and the isolates U+2066–U+2069 reorder the
characters shown after them without being seen themselves: a run named "loss\\u202etxt.exe"
displays as "lossexe.txt", and a campaign title can make a page or a report read other than what
is stored. A campaign's title and the names of items, runs, teams and stages refuse them; the
marks a right-to-left script needs (U+200E, U+200F, U+061C) stay allowed. Pure: no Django, no I/O.
"""

from __future__ import annotations

from typing import Final

BIDI_CONTROLS: Final = frozenset(
    chr(code) for code in (*range(0x202A, 0x202F), *range(0x2066, 0x206A))
)


def bidi_controls_in(text: str) -> list[str]:
    """The bidirectional controls `text` holds, as "U+202E", in order of first appearance."""
    found: list[str] = []
    for ch in text:
        name = f"U+{ord(ch):04X}"
        if ch in BIDI_CONTROLS and name not in found:
            found.append(name)
    return found


def bidi_refusal(text: str) -> str | None:
    """Why `text` cannot be a name (None when it can)."""
    found = bidi_controls_in(text)
    if not found:
        return None
    return (
        f"Remove the invisible text-direction control character(s) {', '.join(found)}: "
        "they make a name display differently from what it is."
    )
