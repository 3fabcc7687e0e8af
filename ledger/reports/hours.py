"""The closing report's hours: each stage's planned hours (from the frozen baseline) beside the
observed ones (the runs that stand for the stage, or what was typed: reconciled once,
docs/domain.md §8.6), the deviations
that need a note, both schedules on one calendar, and the hour ratios for the next campaign
(docs/domain.md §10). Hours are Decimal, written to the hundredth."""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from campaigns.domain import calendar
from campaigns.domain.formatting import CENT, format_hours_fixed, format_percent
from campaigns.domain.observed_hours import Reconciled, StageObserved
from campaigns.models import PlannedItem, Stage
from ledger.domain.cost_per_deliverable import StageHours, ratios_by_kind


def hours_section(
    snapshot: dict[str, Any],
    stages: list[Stage],
    observed: Reconciled,
    items_by_id: dict[int, PlannedItem],
) -> dict[str, Any]:
    """`observed`: the stages' figures as campaigns/domain/observed_hours.py reconciles them
    with the runs (docs/domain.md §8.6), the page's, the API's and the forecast's too."""
    window = float(Decimal(snapshot["window_hours"]))
    rows = _stage_rows(snapshot, stages, observed, items_by_id)
    unattributed = observed.unattributed_hours.quantize(CENT)
    calendars = place_in_time(rows, window)
    return {
        "stages": rows,
        "unattributed_run_hours": format_hours_fixed(unattributed),
        "observed_hours": format_hours_fixed(observed.total.quantize(CENT)),
        "totals": _totals(rows, window, unattributed, calendars),
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


def _stage_rows(
    snapshot: dict[str, Any],
    stages: list[Stage],
    observed: Reconciled,
    items_by_id: dict[int, PlannedItem],
) -> list[dict[str, Any]]:
    """One row per stage of the baseline, then per stage added after it."""
    frozen = {s["id"]: s for s in snapshot.get("stages", [])}
    live = {s.pk: s for s in stages}
    rows: list[dict[str, Any]] = []
    for pk in list(frozen) + [pk for pk in live if pk not in frozen]:
        stage = live.get(pk)
        # The frozen row where there is one; a stage added after commit reserved nothing.
        plan = frozen.get(pk) or stage.as_plan()  # type: ignore[union-attr]
        seen = observed.stages.get(pk) if stage is not None else None
        rows.append(_stage_row(pk, plan, stage, pk in frozen, seen, items_by_id))
    return rows


def _stage_row(
    pk: int,
    plan: Mapping[str, Any],
    stage: Stage | None,
    in_baseline: bool,
    seen: StageObserved | None,
    items_by_id: dict[int, PlannedItem],
) -> dict[str, Any]:
    planned = Decimal(plan["planned_hours"]) if in_baseline else Decimal(0)
    observed = seen.hours if seen is not None else None
    delta = observed - planned if observed is not None else None
    needs = observed is not None and Stage(planned_hours=planned).needs_deviation_note(observed)
    note = stage.deviation_note if stage is not None else ""
    variant_id = plan.get("variant")
    variant = items_by_id.get(variant_id) if variant_id else None
    return {
        "id": pk,
        "name": plan["name"],
        "kind": plan["kind"],
        "machine": plan["machine"],
        "resource": plan["resource"] or "",
        "variant": variant.name if variant else None,
        "in_baseline": in_baseline,
        "added_after_commit": not in_baseline,
        "removed": stage is None,
        "depends_on": list(plan["depends_on"]),
        "planned_hours": format_hours_fixed(planned),
        "observed_hours": format_hours_fixed(observed),
        "observed_source": seen.source if seen is not None else None,
        # Both figures where a typed one differs from the runs', with the reason (§8.6).
        "runs_observed_hours": format_hours_fixed(seen.runs_hours) if seen else None,
        "observed_reason": seen.reason if seen is not None else "",
        "deviation_hours": format_hours_fixed(delta),
        "deviation_percent": format_percent(delta, planned) if delta is not None else None,
        "needs_note": needs,
        "deviation_note": note,
        "explained": (not needs) or bool(note.strip()),
    }


def _totals(
    rows: list[dict[str, Any]],
    window: float,
    unattributed: Decimal,
    calendars: tuple[float | None, float | None],
) -> dict[str, Any]:
    planned_calendar, observed_calendar = calendars
    observed_any = any(r["observed_hours"] is not None for r in rows)

    def total(machine: bool, field: str) -> Decimal:
        return sum(
            (Decimal(r[field]) for r in rows if r["machine"] == machine and r[field] is not None),
            start=Decimal(0),
        )

    planned_machine = total(True, "planned_hours")
    observed_machine = total(True, "observed_hours") + unattributed
    return {
        "window_hours": format_hours_fixed(window),
        "reserved_machine_hours": format_hours_fixed(planned_machine),
        "observed_machine_hours": format_hours_fixed(observed_machine),
        "machine_deviation_hours": format_hours_fixed(observed_machine - planned_machine),
        "planned_human_hours": format_hours_fixed(total(False, "planned_hours")),
        "observed_human_hours": format_hours_fixed(total(False, "observed_hours")),
        "planned_calendar_hours": format_hours_fixed(planned_calendar),
        # Observed durations where known, planned ones elsewhere, on the same graph.
        "observed_calendar_hours": (
            format_hours_fixed(observed_calendar) if observed_any else None
        ),
        "stages": len(rows),
        "stages_observed": sum(1 for r in rows if r["observed_hours"] is not None),
    }


def place_in_time(rows: list[dict[str, Any]], window: float) -> tuple[float | None, float | None]:
    """Planned start/end from the frozen stages' schedule; observed ones on the same graph."""
    known = {r["id"] for r in rows}

    def stages_with(durations: dict[int, float]) -> list[calendar.Stage]:
        return [
            calendar.Stage(
                key=str(r["id"]),
                name=r["name"],
                kind=r["kind"],
                machine=r["machine"],
                resource=r["resource"] or None,
                planned_hours=durations[r["id"]],
                depends_on=tuple(str(d) for d in r["depends_on"] if d in known),
            )
            for r in rows
        ]

    planned = {r["id"]: float(Decimal(r["planned_hours"])) for r in rows}
    observed = {r["id"]: float(Decimal(r["observed_hours"] or r["planned_hours"])) for r in rows}
    try:
        plan = calendar.schedule(stages_with(planned), window)
        actual = calendar.schedule(stages_with(observed), window)
    except ValueError as exc:
        for r in rows:
            r.update(planned_start=None, planned_end=None, observed_start=None, observed_end=None)
            r["schedule_error"] = str(exc)
        return None, None
    for r in rows:
        p, a = plan.entry(str(r["id"])), actual.entry(str(r["id"]))
        r["planned_start"], r["planned_end"] = (
            format_hours_fixed(p.start_hours),
            format_hours_fixed(p.end_hours),
        )
        r["critical"] = str(r["id"]) in plan.critical_path
        seen = r["observed_hours"] is not None
        r["observed_start"] = format_hours_fixed(a.start_hours) if seen else None
        r["observed_end"] = format_hours_fixed(a.end_hours) if seen else None
    return plan.makespan_hours, actual.makespan_hours


def next_campaign(hours: dict[str, Any]) -> dict[str, Any]:
    ratios = ratios_by_kind(
        StageHours(
            r["kind"],
            Decimal(r["planned_hours"]),
            Decimal(r["observed_hours"]) if r["observed_hours"] is not None else None,
        )
        for r in hours["stages"]
    )
    advice = []
    for k in ratios:
        if k.ratio is None:
            advice.append(f"{k.kind}: {k.observed_hours} h observed with nothing planned: plan it.")
        elif k.ratio > Decimal("1.10"):
            advice.append(
                f"{k.kind}: took ×{k.ratio} the plan ({k.observed_hours} h for "
                f"{k.planned_hours} h): reserve ×{k.ratio} next time."
            )
        elif k.ratio < Decimal("0.90"):
            advice.append(
                f"{k.kind}: took ×{k.ratio} the plan: the next estimate can shrink accordingly."
            )
        else:
            advice.append(f"{k.kind}: within 10% of the plan (×{k.ratio}).")
    unobserved = hours["totals"]["stages"] - hours["totals"]["stages_observed"]
    if unobserved:
        advice.append(
            f"{unobserved} stage(s) have no observed hours: record them to sharpen the estimate."
        )
    return {
        "ratios": [
            {
                "kind": k.kind,
                "stages": k.stages,
                "planned_hours": format_hours_fixed(k.planned_hours),
                "observed_hours": format_hours_fixed(k.observed_hours),
                "ratio": str(k.ratio) if k.ratio is not None else None,
            }
            for k in ratios
        ],
        "advice": advice,
    }
