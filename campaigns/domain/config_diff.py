"""The configuration keys that differ between runs (pure: no Django, no I/O).

A run's configuration is the JSON object its client logged (docs/domain.md §5). Nested objects
are flattened to dotted keys (``optimizer.lr``) so a difference deep inside shows as one row.
A key is shown when its value is not the same in every run, a run without the key counting as a
value of its own (shown as "—"). Keys sort by name; values print as compact JSON.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

MISSING = "—"


def flatten(config: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in config.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping) and value:
            out.update(flatten(value, f"{name}."))
        else:
            out[name] = value
    return out


def _shown(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)


def differing_keys(configs: Sequence[Mapping[str, Any] | None]) -> list[tuple[str, list[str]]]:
    """``(key, [value shown for each run])`` for every key whose value differs between runs."""
    flat = [flatten(c) if isinstance(c, Mapping) else {} for c in configs]
    keys = sorted({k for f in flat for k in f})
    rows = []
    for key in keys:
        shown = [_shown(f[key]) if key in f else MISSING for f in flat]
        if len(set(shown)) > 1:
            rows.append((key, shown))
    return rows
