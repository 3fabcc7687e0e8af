"""Plan design checks: warn when the variants look like a full hyper-parameter grid.

docs/domain.md §2: prefer a small interpretable set of variants that isolates one cause over
launching every combination of rank × precision × learning rate × length at once. A set of variant
configurations is "a full grid" when at least two keys vary, each over at least two values,
and the variants cover (nearly) every combination of those values.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import product
from math import prod
from typing import Any


def _hashable(value: Any) -> Any:
    if isinstance(value, Mapping):
        return tuple(sorted((k, _hashable(v)) for k, v in value.items()))
    if isinstance(value, list | tuple):
        return tuple(_hashable(v) for v in value)
    return value


def grid_warning(configs: Sequence[Mapping[str, Any]]) -> str | None:
    """A plain-words warning when `configs` form a grid over two or more varying keys."""
    if len(configs) < 4:
        return None
    keys = sorted({k for c in configs for k in c})
    values = {k: {_hashable(c.get(k)) for c in configs} for k in keys}
    varying = [k for k in keys if len(values[k]) >= 2]
    if len(varying) < 2:
        return None
    combos = {tuple(_hashable(c.get(k)) for k in varying) for c in configs}
    full = prod(len(values[k]) for k in varying)
    grid = set(product(*(values[k] for k in varying)))
    # "Nearly every combination": at least three quarters of the grid is planned.
    if len(combos & grid) * 4 >= full * 3:
        return (
            f"The {len(configs)} variants look like a full grid over {' × '.join(varying)} "
            f"({full} combinations): prefer a small set that isolates one cause."
        )
    return None
