"""Which end of a metric is best (docs/domain.md §4 and §16).

A metric is loss-like (lower is better) when its stop rule fires on the metric growing
(comparator ``gt``/``ge``: the rule stops a run whose loss rises past a threshold), not loss-like
when the rule fires on it falling (``lt``/``le``); without a rule, when its name says loss. The
compare page's "best" column and the report's quality per dollar both read this one rule.
"""

from __future__ import annotations

import math
from collections.abc import Iterable


def loss_like(metric: str, comparator: str = "") -> bool:
    """Lower is better: the stop rule fires on the metric growing, or its name says loss."""
    if comparator in ("gt", "ge"):
        return True
    if comparator in ("lt", "le"):
        return False
    return "loss" in metric.lower()


def best_value(values: Iterable[float], lower_is_better: bool) -> float | None:
    """The best finite value (min when lower is better, else max); None when there is none."""
    finite = [v for v in values if math.isfinite(v)]
    if not finite:
        return None
    return min(finite) if lower_is_better else max(finite)
