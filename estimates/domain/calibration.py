"""Calibration: how far a team's observed stage hours fell from its estimates, per stage kind
and GPU model (pure: no Django, no I/O; docs/domain.md §20).

An observation is one stage of a committed campaign's timeline (campaigns/domain/timeline.py)
that is **done**: it has its one observed figure (typed, or its runs': §8.6), its item was not
cut (a cut stage stopped early and says nothing of how long the work takes), and it is in the
committed calendar: ``ratio = observed / estimated``, the estimate being the stage's committed
hours (what was promised). Stages tied to no item (setup, loading, retrieval) are observations
like any other. Its GPU is the GPU its item needs, else the one its resource label names.
Stages planned at 0 h have no ratio and are left out. Per (kind, GPU) group: ``count``, the
``median`` ratio, the ``spread`` (lowest, highest, and the interquartile range p25..p75 from 2
observations on, by the "inclusive" method) and the source campaigns.

A forecast applies a group's median only from ``MIN_OBSERVATIONS`` (3) observations: two runs
are an anecdote. The GPU key is the normalized GPU model name, "" when the stage names none.

Units: hours as floats (wall hours); ratios are plain numbers rounded to 4 places for display.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from campaigns.domain.timeline import DONE, Timeline
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


def stage_gpu(item_gpu: str, resource: str, known: Iterable[str]) -> str:
    """A stage's GPU model: the one its item needs, else the one its resource label names."""
    return gpu_in(item_gpu, known) or gpu_in(resource, known)


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


def observations_of(
    timeline: Timeline,
    *,
    campaign_id: int,
    title: str,
    item_gpus: Mapping[int, str],
    known_gpus: Sequence[str],
) -> list[Observation]:
    """The campaign's observations: its timeline's done stages in the committed calendar, each
    observed against its committed hours (the rule above); `item_gpus`: each item's GPU."""
    found = []
    for line in timeline.stages:
        seen = line.observed.hours
        if line.state != DONE or seen is None or line.planned_hours is None:
            continue
        item_gpu = item_gpus.get(line.variant_id, "") if line.variant_id is not None else ""
        found.append(
            Observation(
                line.kind,
                stage_gpu(item_gpu, line.resource, known_gpus),
                campaign_id,
                title,
                # The committed calendar's length for the stage, to the hundredth it was typed in.
                round(line.planned_hours, 6),
                float(seen),
            )
        )
    return found


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
