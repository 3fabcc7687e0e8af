"""The next plan starts from the last one's lessons (pure: no Django, no I/O; docs/domain.md §8.4,
§20, §21). One function, `lessons`, gives per stage kind and GPU the ratio the next plan applies
to the predecessor's hours, where it comes from and its spread; the closing report's "next
time" advice and the clone's planned hours both read it, so they agree by construction.

The rule, per (stage kind, GPU) of the predecessor's plan:

1. the **team's median**, when the team's calibration has 3 or more observations of that kind
   and GPU (§20; the predecessor's own stages among them): "team median of 4 training stages
   in #1 first, #2 second";
2. else **this campaign's ratio**: the sum of its observed hours over the sum of their committed
   hours, over its observations of that kind and GPU (its timeline's done stages, cut items
   left out, stages tied to no item included: estimates/domain/calibration.py
   `observations_of`), rounded half-up to 0.01: "this campaign: setup took ×6.00";
3. else no lesson: the hours stay as planned before ("no setup stage observed").

A lesson's spread is its observations' per-stage ratios (lowest, highest, p25, p75). The clone
multiplies a stage's planned hours by its kind's lesson, and an item's by the lesson of the
stages its forecast rescales (its training stages, else its machine stages' kind; an item with
no stage: training), each rounded half-up to 0.01 h. Applying this campaign's ratios to its own
committed plan gives back its observed hours per kind (to the ratio's rounding).

Units: hours Decimal to 0.01; ratios Decimal (this campaign's to 0.01, the team's median to
0.0001 as the calibration shows it).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal
from typing import Any, Final

from campaigns.domain.formatting import format_hours_fixed
from catalog.domain.gpu_names import normalize_gpu
from estimates.domain import calibration
from estimates.domain.calibration import Calibration, Observation

CENT: Final = Decimal("0.01")
# The team's median as the calibration shows it (estimates/domain/calibration.py: 4 places).
TEAM_QUANTUM: Final = Decimal("0.0001")
THIS_CAMPAIGN: Final = "this campaign"
TEAM: Final = "team"
NONE: Final = "none"
# Within this share of the plan, a ratio is no lesson worth a warning in the advice.
NEAR: Final = Decimal("0.10")


@dataclass(frozen=True)
class Lesson:
    """What the next plan applies to the predecessor's hours of one stage kind on one GPU."""

    kind: str
    gpu: str
    # None: no lesson (nothing observed, or observed with nothing committed): hours as before.
    ratio: Decimal | None
    source: str
    words: str
    spread: Mapping[str, float | None] = field(default_factory=dict)
    # This campaign's observations of the kind: how many, and their committed and observed sums.
    stages: int = 0
    planned_hours: Decimal = Decimal(0)
    observed_hours: Decimal = Decimal(0)
    # The team's median: its observation count and source campaigns (id, title).
    count: int = 0
    campaigns: tuple[tuple[int, str], ...] = ()

    def apply(self, hours: Decimal) -> Decimal:
        """`hours` × the ratio, to the hundredth; as they were without a lesson."""
        if self.ratio is None:
            return Decimal(hours)
        return (Decimal(hours) * self.ratio).quantize(CENT, rounding=ROUND_HALF_UP)

    def as_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "gpu": self.gpu,
            "ratio": None if self.ratio is None else str(self.ratio),
            "source": self.source,
            "words": self.words,
            "spread": dict(self.spread),
            "stages": self.stages,
            "planned_hours": format_hours_fixed(self.planned_hours),
            "observed_hours": format_hours_fixed(self.observed_hours),
            "count": self.count,
            "source_campaigns": [{"id": pk, "title": title} for pk, title in self.campaigns],
        }


@dataclass(frozen=True)
class Lessons:
    by_key: Mapping[tuple[str, str], Lesson]

    def __iter__(self) -> Iterator[Lesson]:
        """In (kind, GPU) order."""
        return iter([self.by_key[k] for k in sorted(self.by_key)])

    def lesson(self, kind: str, gpu: str) -> Lesson:
        """The lesson for a stage of `kind` on `gpu`; none when the plan had no such stage."""
        found = self.by_key.get((kind, normalize_gpu(gpu)))
        if found is not None:
            return found
        return Lesson(kind, gpu, None, NONE, f"no {kind} stage in the plan before")


def _d(value: float) -> Decimal:
    return Decimal(repr(value))


def _own(kind: str, gpu: str, rows: Sequence[Observation]) -> Lesson:
    """This campaign's lesson: its observed over its committed hours of the kind."""
    if not rows:
        return Lesson(kind, gpu, None, NONE, f"no {kind} stage observed: as planned before")
    planned = sum((_d(o.estimated_hours) for o in rows), Decimal(0)).quantize(CENT)
    observed = sum((_d(o.observed_hours) for o in rows), Decimal(0)).quantize(CENT)
    with_plan = [o for o in rows if o.estimated_hours > 0]
    spread = calibration.calibrate(with_plan)[0].spread() if with_plan else {}
    took = f"{format_hours_fixed(observed)} h"
    if planned <= 0:
        ratio, source = None, NONE
        words = f"this campaign: {kind} took {took} with nothing planned: plan it"
    else:
        ratio = (observed / planned).quantize(CENT, rounding=ROUND_HALF_UP)
        source = THIS_CAMPAIGN
        words = f"this campaign: {kind} took ×{ratio} ({took} for {format_hours_fixed(planned)} h)"
    return Lesson(
        kind,
        gpu,
        ratio,
        source,
        words,
        spread,
        stages=len(rows),
        planned_hours=planned,
        observed_hours=observed,
    )


def _team(found: Calibration, own: Lesson) -> Lesson:
    median = _d(found.median).quantize(TEAM_QUANTUM, rounding=ROUND_HALF_UP)
    return Lesson(
        own.kind,
        own.gpu,
        median,
        TEAM,
        f"team median ×{median:.2f} of {found.count} {found.kind} stages in {found.source_names()}",
        found.spread(),
        stages=own.stages,
        planned_hours=own.planned_hours,
        observed_hours=own.observed_hours,
        count=found.count,
        campaigns=found.sources,
    )


def lessons(
    plan: Iterable[tuple[str, str]],
    observations: Iterable[Observation],
    calibrations: Sequence[Calibration],
) -> Lessons:
    """Per (kind, GPU) of the predecessor's plan (`plan`, one pair per stage) and of its
    observations: the ratio the next plan applies, its source and spread (the rule above).
    `observations`: the predecessor's (calibration.observations_of); `calibrations`: the
    team's, the predecessor's own observations included."""
    grouped: dict[tuple[str, str], list[Observation]] = {}
    shown: dict[tuple[str, str], str] = {}
    for kind, gpu in plan:
        key = (kind, normalize_gpu(gpu))
        grouped.setdefault(key, [])
        shown.setdefault(key, gpu)
    for o in observations:
        key = (o.kind, normalize_gpu(o.gpu))
        grouped.setdefault(key, []).append(o)
        shown.setdefault(key, o.gpu)
    out: dict[tuple[str, str], Lesson] = {}
    for key, rows in grouped.items():
        own = _own(key[0], shown[key], rows)
        team = calibration.applicable(calibrations, key[0], shown[key])
        out[key] = _team(team, own) if team is not None else own
    return Lessons(out)


def item_key(stages: Sequence[tuple[str, bool, str]], gpu: str) -> tuple[str, str]:
    """The (kind, GPU) whose lesson an item's planned hours take: those of the stages its
    forecast rescales (its training stages, else its machine stages: the first one's kind),
    else training on the item's own GPU. `stages`: (kind, machine, GPU) of the item's stages,
    in id order."""
    machine = [(kind, on) for kind, is_machine, on in stages if is_machine]
    kind = "training" if not machine or any(k == "training" for k, _ in machine) else machine[0][0]
    return kind, next((on for k, on in machine if k == kind), gpu)


def advice(found: Lessons, unobserved: int) -> list[str]:
    """The closing report's "next time" words from the same lessons the clone applies: one line
    per lesson more than 10% off the plan or without a ratio, one for those within 10%;
    `unobserved`: the stages with no observed figure."""
    words, near = [], []
    for lesson in found:
        what = f"{lesson.kind}{f' on {lesson.gpu}' if lesson.gpu else ''}"
        if lesson.ratio is None:
            words.append(f"{what}: {lesson.words}.")
        elif abs(lesson.ratio - 1) <= NEAR:
            near.append(f"{what} ×{lesson.ratio:.2f}")
        else:
            verb = "reserves" if lesson.ratio > 1 else "shrinks the estimate to"
            words.append(f"{what}: {lesson.words}; the next plan {verb} ×{lesson.ratio:.2f}.")
    if near:
        words.append(
            f"Within 10% of the plan (the next plan applies these all the same): {', '.join(near)}."
        )
    if unobserved:
        words.append(
            f"{unobserved} stage(s) have no observed hours: record them to sharpen the estimate."
        )
    return words
