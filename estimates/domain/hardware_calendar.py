"""A campaign's calendar under its hardware options (docs/domain.md §7.7): "fits the window" is
the campaign's whole timeline with its remaining items on the candidate GPU (setup, loading and
every other stage included), and the calendar's other machine stages still to come are rented
with the option too. Also the words that say where each item's hours on a GPU came from.

Pure: no Django, no I/O. Hours are floats.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final, Protocol


@dataclass(frozen=True)
class CalendarFit:
    """A campaign's calendar with its remaining work on one GPU: its length (every stage
    included) and the machine hours still to come on stages of no remaining work (setup,
    loading, retrieval), which a rental pays for too."""

    hours: float
    other_machine_hours: float


# Given each remaining work's hours on a candidate GPU (by work key), the campaign's calendar.
Calendar = Callable[[Mapping[str, float]], CalendarFit]

# The key of the calendar's other stages when they are rented with an option.
REST: Final = "calendar:rest"


class Sourced(Protocol):
    @property
    def key(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def time_source(self) -> str: ...


SOURCE_WORDS: Final = {
    "pilot": "measured by a pilot",
    "observed": "observed (what their runs took)",
    "calibrated": "calibrated (the team's observed/estimated median)",
}


def measured_words(candidate: str, works: Sequence[Sourced], anywhere: bool) -> str:
    """Where each work's hours on this GPU came from: a pilot, the runs, the team's
    calibration, else the assumed utilization (`anywhere`: some hours were measured on it)."""
    here = f" on the {candidate}" if anywhere else ""
    parts = []
    for source, words in SOURCE_WORDS.items():
        names = [w.name for w in works if w.time_source == source and w.key != REST]
        if names:
            parts.append(f"{words}{here} for {', '.join(names)}")
    if any(w.time_source == "assumed" and w.key != REST for w in works):
        parts.append("assumed utilization of peak FLOP/s for the rest")
    text = "; ".join(parts) or "no work left"
    return text[:1].upper() + text[1:] + "."
