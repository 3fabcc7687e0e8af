"""Where the forecast applies the team's calibration (pure: no Django, no I/O; docs/domain.md
§20, §21), each figure calibrated once:

- an item with no usable pilot and no observation: its planned hours x the team's median for
  its GPU's `training` stages, from 3 observations ("calibrated"); planned hours a clone
  multiplied by the predecessor's lesson already (`calibrated_from`) stand as they are, said so;
- a planned stage tied to no item (setup, loading, retrieval): its planned hours x the team's
  median for its kind and GPU (the GPU its resource label names), from 3 observations, unless a
  clone calibrated it already; the timeline scales it (campaigns/domain/timeline.py, a stage's
  own factor), an observation or a running run still deciding first.

Each calibrated figure is listed with its raw and calibrated hours and its sources (the
forecast panel's rows). Hours are floats.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from campaigns.domain import timeline_calendar
from campaigns.domain.formatting import format_hours as fmt_hours
from campaigns.domain.timeline import Timeline, TimelineInputs
from estimates.domain import calibration
from estimates.domain.forecast_inputs import (
    ASSUMED,
    CALIBRATED,
    ForecastInputs,
    ItemInput,
    h,
)

Row = dict[str, Any]


def _row(what: str, raw: float, found: calibration.Calibration) -> Row:
    return {
        "item": what,
        "raw_hours": h(raw),
        "calibrated_hours": h(raw * found.median),
        "median_ratio": round(found.median, 4),
        "count": found.count,
        "source_campaigns": [{"id": pk, "title": title} for pk, title in found.sources],
    }


def item_hours(
    inputs: ForecastInputs,
    item: ItemInput,
    planned: float,
    rows: list[Row],
    why: str = "no pilot yet",
) -> tuple[float, str, str]:
    """The item's hours, source and note when nothing measured or observed it (the rule
    above); a calibrated item adds its row to `rows`."""
    if item.calibrated_from is not None:
        return _calibrated_before(item, planned, rows, why)
    note = f"{why}: the planned {fmt_hours(planned)} h are assumed"
    found = calibration.applicable(
        inputs.calibrations, "training", calibration.gpu_in(item.gpu, inputs.known_gpus)
    )
    if found is None or planned <= 0:
        return planned, ASSUMED, note
    note = (
        f"{why}: the planned {fmt_hours(planned)} h × {found.median:.2f}, the "
        f"median observed/estimated of {found.count} training stages in "
        f"{found.source_names()}"
    )
    rows.append(_row(item.name, planned, found))
    return planned * found.median, CALIBRATED, note


def _calibrated_before(
    item: ItemInput, planned: float, rows: list[Row], why: str
) -> tuple[float, str, str]:
    """Planned hours a clone multiplied by the predecessor's lesson (§21): they stand, the
    team's calibration is not applied a second time."""
    lesson: Mapping[str, Any] = item.calibrated_from or {}
    ratio = float(lesson.get("ratio") or 1)
    before = lesson.get("planned_before")
    origin = lesson.get("from_campaign") or {}
    words = str(lesson.get("words", ""))
    note = (
        f"{why}: the planned {fmt_hours(planned)} h are {before} h × {ratio:.2f} already "
        f"({words}), from #{origin.get('id')} {origin.get('title', '')}: calibrated once"
    )
    rows.append(
        {
            "item": item.name,
            "raw_hours": h(float(before)) if before is not None else None,
            "calibrated_hours": h(planned),
            "median_ratio": round(ratio, 4),
            "count": int(lesson.get("count") or lesson.get("stages") or 0),
            "source_campaigns": list(lesson.get("source_campaigns") or [origin]),
            "words": words,
        }
    )
    return planned, CALIBRATED, note


def stage_factors(
    inputs: ForecastInputs,
) -> tuple[TimelineInputs, dict[int, calibration.Calibration]]:
    """The timeline's inputs with each stage tied to no item given the team's median for its
    kind and GPU as its factor, where one applies and no clone calibrated it (the rule above);
    and those calibrations by stage id."""
    stages = []
    applied: dict[int, calibration.Calibration] = {}
    for s in inputs.timeline.stages:
        found = None
        if s.variant_id is None and s.id not in inputs.calibrated_stages and s.planned_hours > 0:
            gpu = calibration.gpu_in(s.resource, inputs.known_gpus)
            found = calibration.applicable(inputs.calibrations, s.kind, gpu)
        if found is None:
            stages.append(s)
        else:
            stages.append(replace(s, factor=found.median))
            applied[s.id] = found
    return replace(inputs.timeline, stages=tuple(stages)), applied


def stage_rows(line: Timeline, applied: Mapping[int, calibration.Calibration]) -> list[Row]:
    """The stages the timeline did scale by their factor (planned ones: an observed stage
    lasts what it took), as the forecast panel lists them."""
    rows = []
    for s in line.stages:
        found = applied.get(s.id)
        if found is not None and s.basis == timeline_calendar.CALIBRATED:
            rows.append(_row(f"stage {s.key}", s.hours / found.median, found))
    return rows
