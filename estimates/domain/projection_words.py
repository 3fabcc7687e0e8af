"""How a time measured on one GPU was carried to another, in words, and the interval kind that
follows from it (docs/domain.md §24.11, §24.12). Pure: no Django, no I/O.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence

from catalog.domain import catalog
from catalog.domain.catalog import GpuModel
from estimates.domain import formulas
from estimates.domain.formulas.projection import speedup


@functools.lru_cache(maxsize=4096)
def basis_words(origin: str | None, precision: str, candidate: GpuModel) -> str:
    """How a time measured on ``origin`` was carried to ``candidate``, in words."""
    own = catalog.GPUS.get(catalog.canonical_name(origin or "") or "")
    if own is None or own.name == candidate.name:
        return ""
    if not (own.supports(precision) and candidate.supports(precision)):
        return ""
    found = speedup(own, candidate, precision)
    if found.basis == "measured":
        return f"a measured x{found.ratio:.2f} ({found.source})"
    return f"the peaks' ratio x{found.ratio:.2f} (no measured pair published)"


def range_kind(
    source: str,
    candidate: GpuModel,
    works: Sequence[tuple[str, str | None, str]],
    measured: Mapping[str, str],
    gpus: int,
) -> str:
    """The interval kind of an option's time (docs/domain.md §24.12): a projection is
    "measured" only when every work (key, gpu, precision) was carried by a measured pair."""
    carried = {
        (origin, precision)
        for key, gpu, precision in works
        if (origin := measured.get(key) or gpu) not in (None, candidate.name)
    }
    pairs = all(basis_words(o, p, candidate).startswith("a measured") for o, p in carried)
    basis = "measured" if carried and pairs else "roofline"
    profile = candidate.link_profile()
    per_node = profile.gpus_per_node if profile is not None else 8
    return formulas.time_kind(source, gpus, per_node, basis)
