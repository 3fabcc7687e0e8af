"""An item's fate, from its own runs (docs/domain.md: items and their runs).

Pure: no Django. The one derivation behind both the API's item ``status``/``fate`` and the
closing report's ``fate``, so the two cannot disagree.

Only **full** runs settle an item: pilots measure throughput and check the setup, they are not
the item's result. In order of precedence:

- ``cut``: a decision cut the item (whatever ran before);
- ``done``: at least one full run completed;
- ``running``: a full run is still running;
- ``stopped``: full runs ran and a stop rule ended at least one, none completed;
- ``failed``: full runs ran and all failed;
- ``planned``: no full run yet (pilots may have run).

The API's ``status`` keeps its four values: ``running`` and ``failed`` read as ``planned``
there (the item still awaits a result), see ``status_of``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

Fate = Literal["cut", "done", "running", "stopped", "failed", "planned"]
FATES: tuple[Fate, ...] = ("done", "cut", "stopped", "running", "failed", "planned")


def item_fate(*, cut: bool, full_runs: Mapping[str, int]) -> Fate:
    """The fate of an item; ``full_runs`` counts its full runs by run status (missing = 0)."""
    if cut:
        return "cut"
    if full_runs.get("completed", 0):
        return "done"
    if full_runs.get("running", 0):
        return "running"
    if full_runs.get("stopped", 0):
        return "stopped"
    if full_runs.get("failed", 0):
        return "failed"
    return "planned"


def status_of(fate: Fate) -> str:
    """The API's item ``status`` (planned, done, cut, stopped) for a fate."""
    return fate if fate in ("cut", "done", "stopped") else "planned"
