"""The closing report's hours, read from the campaign's one timeline (campaigns/domain/timeline.py,
docs/domain.md §7a, §8.4, §16): per stage its reserved hours (the committed calendar's), its
one observed figure (the runs it stands for or what was typed, never both: §8.6) and its
current hours (observed where it happened, forecast elsewhere, a cut stage only what ran
before the cut), where the committed calendar put it and where the current one does; the
deviations that need a note; and the totals, the observed total being the stages' figures plus
the runs no stage stands for. Nothing here schedules a stage or sums a run: it formats the
timeline. Hours are written to the hundredth. Pure: no Django, no I/O."""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from campaigns.domain.formatting import CENT, format_hours_fixed, format_percent
from campaigns.domain.observed_hours import needs_deviation_note
from campaigns.domain.timeline import CUT, StageLine, Timeline
from estimates.domain.next_plan import Lessons, advice

CUT_NOTE = "cut by a decision: it counts what ran before the cut"


def _hours(value: float | Decimal | None) -> Decimal | None:
    return None if value is None else Decimal(str(value)).quantize(CENT)


def hours_section(timeline: Timeline, notes: Mapping[int, str]) -> dict[str, Any]:
    """`notes`: each stage's deviation note by stage id (what people typed to explain it)."""
    rows = [stage_row(line, notes.get(line.id, "")) for line in timeline.stages]
    unattributed = timeline.observed.unattributed_hours.quantize(CENT)
    return {
        "stages": rows,
        "unattributed_run_hours": format_hours_fixed(unattributed),
        "unattributed_runs": timeline.observed.unattributed_runs,
        "observed_hours": format_hours_fixed(timeline.observed.total.quantize(CENT)),
        "totals": _totals(rows, timeline, unattributed),
        "deviations": [
            {
                "stage": r["name"],
                "planned_hours": r["planned_hours"],
                "observed_hours": r["observed_hours"],
                "deviation_hours": r["deviation_hours"],
                "deviation_percent": r["deviation_percent"],
                "note": r["deviation_note"],
                "explained": r["explained"],
            }
            for r in rows
            if r["needs_note"]
        ],
        "unexplained_deviations": [r["name"] for r in rows if not r["explained"]],
    }


def stage_row(line: StageLine, note: str) -> dict[str, Any]:
    """One stage: reserved beside observed beside current, and its places in both calendars."""
    committed = line.planned_hours is not None
    # A stage added after commit was never reserved: its committed hours are 0 (§8.3).
    planned = _hours(line.planned_hours) if committed else Decimal(0)
    assert planned is not None
    seen = line.observed
    observed = seen.hours
    delta = observed - planned if observed is not None else None
    needs = observed is not None and needs_deviation_note(planned, observed)
    if line.state == CUT and not note.strip():
        # The decision that cut the item explains why its stage stopped short (§6.4).
        note = CUT_NOTE
    return {
        "id": line.id,
        "name": line.key,
        "kind": line.kind,
        "machine": line.machine,
        "resource": line.resource,
        "variant": line.item,
        "state": line.state,
        "in_baseline": committed,
        "added_after_commit": not committed,
        "planned_hours": format_hours_fixed(planned),
        "observed_hours": format_hours_fixed(observed),
        "observed_source": seen.source,
        # Both figures where a typed one differs from the runs', with the reason (§8.6).
        "runs_observed_hours": format_hours_fixed(seen.runs_hours),
        "observed_reason": seen.reason if seen.typed_hours is not None else "",
        "forecast_hours": format_hours_fixed(_hours(line.hours)),
        "basis": line.basis,
        "planned_start": format_hours_fixed(_hours(line.planned_start)),
        "planned_end": format_hours_fixed(_hours(line.planned_end)),
        "start": format_hours_fixed(_hours(line.start)),
        "end": format_hours_fixed(_hours(line.end)),
        "critical": line.critical,
        "deviation_hours": format_hours_fixed(delta),
        "deviation_percent": format_percent(delta, planned) if delta is not None else None,
        "needs_note": needs,
        "deviation_note": note,
        "explained": (not needs) or bool(note.strip()),
    }


def _totals(
    rows: list[dict[str, Any]], timeline: Timeline, unattributed: Decimal
) -> dict[str, Any]:
    def total(machine: bool, field: str) -> Decimal:
        return sum(
            (Decimal(r[field]) for r in rows if r["machine"] == machine and r[field] is not None),
            start=Decimal(0),
        )

    planned_machine = total(True, "planned_hours")
    # The runs no stage stands for ran on a machine: they are machine time (§8.6).
    observed_machine = total(True, "observed_hours") + unattributed
    return {
        "window_hours": format_hours_fixed(_hours(timeline.window_hours)),
        "reserved_machine_hours": format_hours_fixed(planned_machine),
        "observed_machine_hours": format_hours_fixed(observed_machine),
        "machine_deviation_hours": format_hours_fixed(observed_machine - planned_machine),
        "forecast_machine_hours": format_hours_fixed(_hours(timeline.machine_hours)),
        "planned_human_hours": format_hours_fixed(total(False, "planned_hours")),
        "observed_human_hours": format_hours_fixed(total(False, "observed_hours")),
        # The committed calendar, and the current one: observed where it happened, forecast
        # elsewhere, a cut stage only what ran before the cut (§7a).
        "planned_calendar_hours": format_hours_fixed(_hours(timeline.planned_hours)),
        "forecast_calendar_hours": format_hours_fixed(_hours(timeline.hours)),
        "slack_hours": format_hours_fixed(_hours(timeline.slack_hours)),
        "fits_in_window": timeline.fits,
        "stages": len(rows),
        "stages_observed": sum(1 for r in rows if r["observed_hours"] is not None),
        "problem": timeline.problem,
    }


def next_campaign(lessons: Lessons, hours: dict[str, Any]) -> dict[str, Any]:
    """What the next campaign starts from: per stage kind and GPU the ratio the next plan
    applies, its source and spread, and the advice in words; the clone applies the same lessons
    (estimates/domain/next_plan.py, docs/domain.md §21)."""
    unobserved = hours["totals"]["stages"] - hours["totals"]["stages_observed"]
    return {
        "ratios": [lesson.as_json() for lesson in lessons],
        "advice": advice(lessons, unobserved),
    }
