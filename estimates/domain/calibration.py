"""Calibration: how far a team's observed stage hours fell from its estimates, per stage kind
and GPU model (pure: no Django, no I/O; docs/domain.md §20).

An observation is one committed stage with observed hours: ``ratio = observed / estimated``,
the estimate being the stage's planned hours in the frozen baseline (what was promised). Stages
planned at 0 h have no ratio and are left out. Per (kind, GPU) group: ``count``, the ``median``
ratio, the ``spread`` (lowest, highest, and the interquartile range p25..p75 from 2
observations on, by the "inclusive" method) and the source campaigns.

A forecast applies a group's median only from ``MIN_OBSERVATIONS`` (3) observations: two runs
are an anecdote. The GPU key is the normalized GPU model name, "" when the stage names none.

Units: hours as floats (wall hours); ratios are plain numbers rounded to 4 places for display.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Final

from catalog.domain.gpu_names import normalize_gpu

MIN_OBSERVATIONS: Final = 3


def gpu_in(resource: str, known: Iterable[str]) -> str:
    """The known GPU model a resource label names ("rtx4090-a" names RTX-4090), longest match
    first; "" when none."""
    label = normalize_gpu(resource)
    for name in sorted(known, key=lambda n: -len(normalize_gpu(n))):
        key = normalize_gpu(name)
        if key and key in label:
            return name
    return ""


@dataclass(frozen=True)
class Observation:
    kind: str
    gpu: str
    campaign_id: int
    campaign_title: str
    estimated_hours: float
    observed_hours: float

    @property
    def ratio(self) -> float:
        return self.observed_hours / self.estimated_hours


@dataclass(frozen=True)
class Calibration:
    kind: str
    gpu: str
    ratios: tuple[float, ...]
    sources: tuple[tuple[int, str], ...]  # (campaign id, title), in id order

    @property
    def count(self) -> int:
        return len(self.ratios)

    @property
    def median(self) -> float:
        return statistics.median(self.ratios)

    @property
    def applies(self) -> bool:
        return self.count >= MIN_OBSERVATIONS

    def spread(self) -> dict[str, float | None]:
        low, high = min(self.ratios), max(self.ratios)
        p25 = p75 = None
        if self.count >= 2:
            quartiles = statistics.quantiles(self.ratios, n=4, method="inclusive")
            p25, p75 = round(quartiles[0], 4), round(quartiles[2], 4)
        return {"min": round(low, 4), "max": round(high, 4), "p25": p25, "p75": p75}

    def source_names(self) -> str:
        return ", ".join(f"#{pk} {title}" for pk, title in self.sources)

    def as_json(self) -> dict[str, Any]:
        return {
            "stage_kind": self.kind,
            "gpu": self.gpu,
            "count": self.count,
            "median_ratio": round(self.median, 4),
            "spread": self.spread(),
            "applies": self.applies,
            "source_campaigns": [{"id": pk, "title": title} for pk, title in self.sources],
        }


def calibrate(observations: Iterable[Observation]) -> list[Calibration]:
    """Group the observations by (stage kind, GPU) and summarize each, in key order."""
    groups: dict[tuple[str, str], list[Observation]] = defaultdict(list)
    for obs in observations:
        if obs.estimated_hours > 0 and obs.observed_hours >= 0:
            groups[(obs.kind, obs.gpu)].append(obs)
    found = []
    for (kind, gpu), rows in sorted(groups.items()):
        sources = sorted({(o.campaign_id, o.campaign_title) for o in rows})
        found.append(Calibration(kind, gpu, tuple(o.ratio for o in rows), tuple(sources)))
    return found


def applicable(calibrations: Sequence[Calibration], kind: str, gpu: str = "") -> Calibration | None:
    """The calibration a forecast applies to a stage of `kind` on `gpu`: that GPU's group when
    it has enough observations, else none (another GPU's ratio says nothing of this one)."""
    for calibration in calibrations:
        if (
            calibration.kind == kind
            and normalize_gpu(calibration.gpu) == normalize_gpu(gpu)
            and calibration.applies
        ):
            return calibration
    return None
