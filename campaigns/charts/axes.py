"""The value axis every metric drawing uses (pure: no Django, no I/O).

One rule for the server-rendered curves and overlays (campaigns/charts/curves.py) and the
interactive charts' payload: the range covers the finite values only (non-finite points are
marked apart); a constant series is padded by 5% of its magnitude (1 when it is 0), so a constant
``lr`` of 3e-4 gets 2.85e-4 … 3.15e-4, not −0.4998 … 0.5002, and a loss of 7.8e24 still gets a
range of non-zero width (a pad of ±0.5 vanishes at that magnitude and divided by zero). The padded
ends are clamped to the largest finite float, so a constant series near 1.8e308 keeps a finite
axis. A range whose width overflows a float (−1.7e308 … 1.7e308) is not narrowed: ``fraction``
computes on halves so positions stay finite.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Iterable

PAD = 0.05
LARGEST = sys.float_info.max


def value_range(values: Iterable[float]) -> tuple[float, float]:
    """(lo, hi), both finite, with ``lo < hi`` and ``hi / 2 - lo / 2`` finite, covering every
    finite value."""
    finite = [v for v in values if math.isfinite(v)]
    if not finite:
        return 0.0, 1.0
    lo, hi = min(finite), max(finite)
    if hi == lo:
        pad = abs(lo) * PAD if lo != 0 else 1.0
        lo, hi = max(lo - pad, -LARGEST), min(hi + pad, LARGEST)
        if hi == lo:  # a subnormal magnitude: the pad itself underflowed
            lo, hi = lo - 1e-300, hi + 1e-300
    return lo, hi


def fraction(value: float, lo: float, hi: float) -> float:
    """Where ``value`` sits between lo (0) and hi (1), computed on halves so a range as wide as
    the float allows does not overflow to infinity."""
    return (value / 2 - lo / 2) / (hi / 2 - lo / 2)
