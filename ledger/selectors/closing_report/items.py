"""The closing report's items and runs: each planned item's fate and what verified it, in words
(the rule of campaigns/domain/item_fate.py, the API's item status too: its full runs, its stages
on the timeline and, here, the accepted deliverables naming its runs), the runs by status, the
metrics logged, the segments of resumed runs, and what each pilot measured against the estimate
it replaced."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from decimal import Decimal
from typing import Any

from campaigns.domain import item_fate as fates
from campaigns.domain.formatting import format_hours_fixed, format_money
from campaigns.domain.timeline import Timeline
from campaigns.models import DecisionPoint, ItemStatus, PlannedItem, RunKind, RunStatus, Tier
from ledger.models import Deliverable
from ledger.selectors.closing_report.common import moment


def run_counts(run_groups: Iterable[dict[str, Any]]) -> dict[int | None, dict[str, Any]]:
    counts: dict[int | None, dict[str, Any]] = defaultdict(
        lambda: {"total": 0, **{s: 0 for s in RunStatus.values}, "observed_hours": Decimal(0)}
    )
    for g in run_groups:
        c = counts[g["variant_id"]]
        c["total"] += g["n"]
        c[g["status"]] += g["n"]
        c["observed_hours"] += Decimal(g["hours"] or 0)
    return counts


def item_facts(
    timeline: Timeline, deliverables: Iterable[Deliverable]
) -> tuple[dict[int, list[fates.StageFact]], dict[int, list[fates.DeliverableFact]]]:
    """Each item's stages as the timeline states them, and the accepted deliverables naming
    one of its runs (every check passed: docs/domain.md §14)."""
    delivered: dict[int, list[fates.DeliverableFact]] = defaultdict(list)
    for d in deliverables:
        if d.accepted and d.run is not None and d.run.variant_id is not None:
            delivered[d.run.variant_id].append(
                fates.DeliverableFact(
                    d.pk, d.kind, f"{d.corpus_name} @ {d.corpus_revision}", d.run.run_id
                )
            )
    return fates.stage_facts(timeline.stages), dict(delivered)


def item_fates(
    items: Iterable[PlannedItem],
    run_groups: Iterable[Mapping[str, Any]],
    timeline: Timeline,
    deliverables: Iterable[Deliverable],
) -> dict[int, fates.ItemFate]:
    """Every item's fate by item id: the one rule, with the deliverables the API cannot read."""
    stages, delivered = item_facts(timeline, deliverables)
    return fates.fates_of(
        ((item.pk, item.status == ItemStatus.CUT) for item in items),
        _full_run_counts(run_groups),
        stages,
        delivered,
    )


def items_section(
    items: list[PlannedItem],
    decisions: list[DecisionPoint],
    run_groups: list[dict[str, Any]],
    ended_runs: Sequence[Mapping[str, Any]],
    item_fate: Mapping[int, fates.ItemFate],
) -> dict[str, Any]:
    counts = run_counts(run_groups)
    full_counts = _full_run_counts(run_groups)
    cut_by: dict[int, DecisionPoint] = {}
    for d in decisions:
        for cut in d.cut_variants.all():
            cut_by[cut.pk] = d
    stopped = _ended_runs_by_item(ended_runs)
    tiers: dict[str, list[dict[str, Any]]] = {t: [] for t in Tier.values}
    for item in items:
        ran = sum(g["n"] for g in run_groups if g["variant_id"] == item.pk)
        row = _item_row(
            item,
            counts.get(item.pk) or {"total": 0, "observed_hours": Decimal(0)},
            full_counts.get(item.pk, {}),
            cut_by.get(item.pk),
            stopped.get(item.pk, []),
            ran,
            item_fate[item.pk],
        )
        tiers.setdefault(item.tier, []).append(row)
    return {
        "tiers": [{"tier": t, "items": rows} for t, rows in tiers.items()],
        "fates": {
            fate: sum(1 for rows in tiers.values() for i in rows if i["fate"] == fate)
            for fate in fates.FATES
        },
    }


def _full_run_counts(run_groups: Iterable[Mapping[str, Any]]) -> dict[int, dict[str, int]]:
    """Each item's full runs by status (runs of no item settle no item)."""
    full_counts: dict[int, dict[str, int]] = defaultdict(dict)
    for g in run_groups:
        if g["kind"] == RunKind.FULL and g["variant_id"] is not None:
            by_status = full_counts[g["variant_id"]]
            by_status[g["status"]] = by_status.get(g["status"], 0) + g["n"]
    return full_counts


def _ended_runs_by_item(
    ended_runs: Iterable[Mapping[str, Any]],
) -> dict[int | None, list[dict[str, Any]]]:
    stopped: dict[int | None, list[dict[str, Any]]] = defaultdict(list)
    for r in ended_runs:
        stopped[r["variant_id"]].append(
            {
                "run_id": r["run_id"],
                "status": r["status"],
                "rule": r["stop_rule__kind"],
                "rule_id": r["stop_rule_id"],
                "reason": r["stop_reason"],
                "step": r["stop_step"],
                "at": moment(r["stopped_at"]),
            }
        )
    return stopped


def _item_row(
    item: PlannedItem,
    c: Mapping[str, Any],
    full: dict[str, int],
    decision: DecisionPoint | None,
    ended: list[dict[str, Any]],
    ran: int,
    found: fates.ItemFate,
) -> dict[str, Any]:
    runs = {s: c.get(s, 0) for s in RunStatus.values}
    pilots = ran - sum(full.values())
    # One derivation with the API's item status (campaigns/domain/item_fate.py): pilots never
    # settle it.
    fate = found.fate
    stops = [
        f"run {r['run_id']} stopped: {r['reason'] or 'no reason given'}"
        for r in ended
        if r["status"] == RunStatus.STOPPED
    ]
    if fate == "stopped":
        detail = "; ".join(stops) or "stopped"
    else:
        # A fate of done (or cut, running) can hide runs that a rule stopped on the way.
        detail = "; ".join([_fate_words(found, decision, full, pilots), *stops])
    return {
        "id": item.pk,
        "name": item.name,
        "role": item.role,
        "tier": item.tier,
        "status": item.status,
        "fate": fate,
        "verified_by": list(found.verified_by),
        "detail": detail,
        "runs": {"total": c["total"], **runs},
        "observed_hours": format_hours_fixed(c["observed_hours"]),
        "stopped_runs": ended,
    }


def _fate_words(
    found: fates.ItemFate, decision: DecisionPoint | None, full: Mapping[str, int], pilots: int
) -> str:
    """Why an item that was not stopped ended as it did."""
    fate = found.fate
    if fate == "cut":
        return (
            f"cut at the decision '{decision.label}': {decision.rationale}" if decision else "cut"
        )
    if fate == "done":
        return "verified by " + "; ".join(found.verified_by)
    if fate == "running":
        return f"{full['running']} full run(s) still running"
    if fate == "failed":
        return f"{full['failed']} failed full run(s), none completed"
    said = []
    if found.stages_done:
        said.append(
            f"partly done: {', '.join(found.stages_done)} done, {', '.join(found.stages_left)} not"
        )
    if pilots:
        said.append(f"only pilots ran ({pilots}): no full run")
    return "; ".join(said) or "nothing shows it happened: no full run, no stage done"


def runs_section(
    run_groups: list[dict[str, Any]],
    ended_runs: Sequence[Mapping[str, Any]],
    metrics: list[dict[str, Any]],
    items_by_id: dict[int, PlannedItem],
) -> dict[str, Any]:
    by_status = {s: 0 for s in RunStatus.values}
    hours = Decimal(0)
    for g in run_groups:
        by_status[g["status"]] += g["n"]
        hours += Decimal(g["hours"] or 0)
    return {
        "total": sum(by_status.values()),
        "by_status": by_status,
        "observed_hours": format_hours_fixed(hours),
        "metric_points": sum(m["points"] for m in metrics),
        "non_finite_points": sum(m["non_finite"] for m in metrics),
        "metrics": [
            {
                "name": m["name"],
                "points": m["points"],
                "runs": m["runs"],
                "non_finite": m["non_finite"],
            }
            for m in metrics
        ],
        "ended_without_item": [r["run_id"] for r in ended_runs if r["variant_id"] is None],
    }


def segments_section(
    ended: Sequence[Mapping[str, Any]],
    resumed: Sequence[Mapping[str, Any]],
    entries: Sequence[Mapping[str, Any]],
) -> list[dict[str, Any]]:
    """Each resumed run's segments (docs/domain.md §4): the stretches that ended (failed) and
    the last one, with the hours and the rental entry each posted (null when no hourly rate
    prices the run: a lot's share is not posted per run). Hours and cost add up to the run's."""
    posted = {(e["run_id"], e["run_segment"]): e for e in entries if e.get("run_id")}
    by_run: dict[int, list[Mapping[str, Any]]] = defaultdict(list)
    for segment in ended:
        by_run[segment["run_id"]].append(segment)
    rows = []
    for run in resumed:
        stretches = [
            (s["number"], s["started_at"], s["ended_at"], s["status"], s["hours"])
            for s in by_run[run["id"]]
        ]
        last = None if run["observed_hours"] is None else run["observed_hours"] - run["prior_hours"]
        stretches.append(
            (len(stretches) + 1, run["segment_started_at"], run["finished_at"], run["status"], last)
        )
        segments = [_segment(run["id"], stretch, posted) for stretch in stretches]
        costs = [
            posted[(run["id"], n)]["amount"] for n, *_ in stretches if (run["id"], n) in posted
        ]
        rows.append(
            {
                "run_id": run["run_id"],
                "segments": segments,
                "hours": format_hours_fixed(run["observed_hours"])
                if run["observed_hours"] is not None
                else None,
                "cost": format_money(sum(costs, Decimal(0))) if costs else None,
            }
        )
    return rows


def _segment(
    run_pk: int, stretch: tuple[Any, ...], posted: Mapping[tuple[int, int], Mapping[str, Any]]
) -> dict[str, Any]:
    number, started, ended, status, hours = stretch
    entry = posted.get((run_pk, number))
    return {
        "number": number,
        "started_at": moment(started),
        "ended_at": moment(ended),
        "status": status if ended else "running",
        "hours": None if hours is None else format_hours_fixed(max(hours, Decimal(0))),
        "cost": None if entry is None else format_money(entry["amount"]),
        "entry": None if entry is None else entry["id"],
    }


def pilots_section(
    items: list[PlannedItem],
    samples: Sequence[Mapping[str, Any]],
    estimates: dict[int, dict[str, Any]],
) -> list[dict[str, Any]]:
    """Per item with a pilot: the throughput it measured and the estimate it replaced."""
    latest: dict[int, Mapping[str, Any]] = {}
    for sample in samples:  # oldest first: a newer pilot supersedes
        latest[sample["run__variant_id"]] = sample
    rows = []
    for item in items:
        s = latest.get(item.pk)
        if s is None:
            continue
        cfg = item.config if isinstance(item.config, dict) else {}
        if s["tokens_per_second"]:
            measured, unit = s["tokens_per_second"], "tokens/s"
            assumed = cfg.get("assumed_tokens_per_second")
        else:
            measured, unit = s["samples_per_second"], "samples/s"
            assumed = cfg.get("assumed_samples_per_second")
        estimate = estimates.get(item.pk) or {}
        rows.append(
            {
                "item": item.name,
                "run": s["run__run_id"],
                "measured": f"{measured:,.0f} {unit} on {s['gpus']} GPU(s)",
                "measured_at": moment(s["created_at"]),
                "replaced": (
                    f"assumed {float(assumed):,.0f} {unit}, {item.planned_hours} h planned"
                    if assumed
                    else f"{item.planned_hours} h planned"
                ),
                "forecast_hours": estimate.get("forecast_hours"),
                "time_source": estimate.get("time_source"),
                "note": estimate.get("note"),
            }
        )
    return rows
