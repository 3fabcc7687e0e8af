"""Every figure with its range: intervals derived from the published-figures table's residuals
for that kind of estimate and input, and the chance a plan overruns a number of hours.

Rules (docs/domain.md §24.12):

* A kind is what the figure rests on: time from an assumed utilization, from a pilot on the
  same GPU inside one node or across nodes, carried to another GPU by a measured pair or by the
  roofline; memory of a 16-bit or of a quantized base. Cost follows time (rate x hours).
* For a kind with n residuals r = ln(published / estimated) in the table (mean m, standard
  deviation s), the 80% interval is the prediction interval of a new figure under a log-normal
  error: exp(m -+ t(0.90, n - 1) s sqrt(1 + 1/n)) times the estimate (Student's t). Its
  coverage is measured by leave-one-out on the table (each case against the interval of the
  others) and reported in docs/domain.md; ``BANDS`` holds (m, s, n), which a test recomputes.
* An assumed utilization is the estimator's default 40%: a utilization the caller gives is
  taken as theirs, and the band is centred on it (its spread kept).
* The chance of overrunning H hours is P(T > H) under the same log-normal: 1 - Phi((ln H - mu)
  / sigma), mu = ln(estimate) + m, sigma = s sqrt(1 + 1/n).

Units: the estimate's own (hours, bytes); shares in [0, 1].
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Final

COVERAGE: Final = 0.8
DEFAULT_UTILIZATION: Final = 0.4
# Student's t, 0.90 quantile, by degrees of freedom (any statistics table); beyond 30 the
# normal's 1.2816.
_T90: Final = (
    3.078, 1.886, 1.638, 1.533, 1.476, 1.440, 1.415, 1.397, 1.383, 1.372,
    1.363, 1.356, 1.350, 1.345, 1.341, 1.337, 1.333, 1.330, 1.328, 1.325,
    1.323, 1.321, 1.319, 1.318, 1.316, 1.315, 1.314, 1.313, 1.311, 1.310,
)  # fmt: skip


def t90(degrees: int) -> float:
    if degrees < 1:
        raise ValueError("a band needs at least two residuals")
    return _T90[degrees - 1] if degrees <= len(_T90) else 1.2816


@dataclass(frozen=True)
class Band:
    """Log residuals of one kind: mean, standard deviation, count."""

    mean: float
    sd: float
    cases: int

    @property
    def sigma(self) -> float:
        """The spread of a new figure around the band's centre (prediction, not the mean's)."""
        return self.sd * math.sqrt(1.0 + 1.0 / self.cases)

    @property
    def half_width(self) -> float:
        return t90(self.cases - 1) * self.sigma


def band_from_residuals(residuals: Sequence[float]) -> Band:
    """The band of a kind from its residuals ln(published / estimated)."""
    n = len(residuals)
    mean = sum(residuals) / n
    variance = sum((r - mean) ** 2 for r in residuals) / (n - 1)
    return Band(mean, math.sqrt(variance), n)


# Derived from estimates/tests/published (leave-one-out coverage in docs/domain.md §24.12);
# test_published_figures_table recomputes them.
BANDS: Final[Mapping[str, Band]] = MappingProxyType(
    {
        "time.assumed": Band(-0.2644, 0.2120, 13),
        "time.pilot.one_node": Band(0.1516, 0.1239, 7),
        "time.pilot.many_nodes": Band(0.0137, 0.0131, 11),
        "time.projected.measured": Band(0.0640, 0.0635, 5),
        "time.projected.roofline": Band(0.0269, 0.4104, 7),
        "memory": Band(-0.0420, 0.0581, 11),
        "memory.quantized": Band(0.1304, 0.0696, 11),
    }
)


@dataclass(frozen=True)
class Interval:
    """An estimate's 80% range and the kind of estimate it was derived for."""

    low: float
    high: float
    coverage: float
    kind: str
    cases: int


def interval(value: float, kind: str, *, centred: bool = True) -> Interval:
    """``value``'s interval by ``kind``; ``centred`` False keeps the spread around the value
    itself (a utilization the caller gave)."""
    band = BANDS[kind]
    centre = band.mean if centred else 0.0
    low = value * math.exp(centre - band.half_width)
    high = value * math.exp(centre + band.half_width)
    return Interval(low, high, COVERAGE, kind, band.cases)


def time_kind(source: str, gpus: int, per_node: int, basis: str = "") -> str:
    """The kind a time rests on: its source, its node scope, a projection's basis."""
    if source == "pilot":
        return "time.pilot.many_nodes" if gpus > per_node else "time.pilot.one_node"
    if source == "projected":
        return "time.projected.measured" if basis == "measured" else "time.projected.roofline"
    return "time.assumed"


def overrun_probability(estimate: float, kind: str, limit: float, *, centred: bool = True) -> float:
    """P(the real figure exceeds ``limit``) for an estimate of ``kind`` (module docstring): the
    lot advice's "chance the plan overruns the lot", with the lot's hours as ``limit``."""
    if limit <= 0:
        return 1.0
    if estimate <= 0:
        return 0.0
    band = BANDS[kind]
    mu = math.log(estimate) + (band.mean if centred else 0.0)
    if band.sigma <= 0:
        return 1.0 if mu > math.log(limit) else 0.0
    z = (math.log(limit) - mu) / band.sigma
    return 0.5 * math.erfc(z / math.sqrt(2.0))
