"""The campaign forecast: reserved, forecast and observed hours per item and end to end, against
the window, with the lots the work needs (pure: no Django, no I/O; docs/domain.md §8-§10, §20).

The rule (§10), per item, first that applies:
1. cut by a decision: 0 h;
2. a finished full run (completed, stopped or failed): its observed hours, as its training
   stage reconciles them (§8.6) when it has one ("observed");
3. done, with observed hours (its stages' reconciled figures and its unattributed runs):
   those ("observed");
4. a pilot measured its throughput: the work over the measured rate, or the planned hours x
   assumed / measured ("pilot"; if the item states neither, the planned hours, "assumed");
5. else the planned hours, x the team's calibration median for its GPU's training stages once
   there are 3 observations ("calibrated", §20), else as planned ("assumed"); planned hours a
   clone calibrated already (`calibrated_from`, §21) stand as they are ("calibrated", once).

A planned stage tied to no item (setup, loading, retrieval) lasts its planned hours x the team's
median for its kind and GPU once there are 3 observations (§20), unless a clone calibrated it
already; an item's stages follow the item's forecast.

The calendar is the campaign's one timeline (campaigns/domain/timeline.py, §7.7), built from the
plan, the baseline, what was observed and these item forecasts: reserved hours are its committed
calendar, forecast hours its current one, observed hours its observed total. The lot advice
places the current calendar's machine stages on lots (§9).

Units: hours are floats (wall hours), planned figures arrive as Decimal; money stays Decimal.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from decimal import Decimal
from typing import Any

from campaigns.domain import calendar, observed_hours, plan_figures, timeline
from campaigns.domain.formatting import format_hours as fmt_hours
from campaigns.domain.timeline import TimelineInputs
from estimates.domain import forecast_calibration, lot_selection
from estimates.domain.forecast_advice import (
    count,
    figures_line,
    headline,
    lot_advice,
    pilot_hours,
)
from estimates.domain.forecast_calculator import calculator
from estimates.domain.forecast_inputs import (
    ASSUMED,
    CALIBRATED,
    FINISHED_RUNS,
    ITEM_CUT,
    ITEM_DONE,
    OBSERVED,
    PILOT,
    RUN_PILOT,
    Forecast,
    ForecastInputs,
    ItemForecast,
    ItemInput,
    h,
)
from estimates.domain.plan_warnings import plan_warnings

# The pilot measures training throughput: it rescales an item's training stages, not its
# validation or checkpoint stages (unless the item has no training stage at all).
_SCALED_KINDS = frozenset({"training"})


@dataclass
class _Observed:
    """Observed hours, reconciled once (campaigns/domain/observed_hours.py, §8.6), per item."""

    reconciled: observed_hours.Reconciled
    # Per item: its stages' figures plus its unattributed runs (the forecast's column).
    items: dict[int, float] = field(default_factory=dict)
    # Per item: what its finished full runs took (the stage claiming them, when there is one).
    full_runs: dict[int, float] = field(default_factory=dict)


def _stage_items(
    stages: Sequence[timeline.StagePlan], reconciled: observed_hours.Reconciled
) -> dict[int, float]:
    """Per item: the observed hours of its own stages."""
    items: dict[int, float] = defaultdict(float)
    for s in stages:
        figure = reconciled.hours(s.id)
        if figure is not None and s.variant_id is not None:
            items[s.variant_id] += float(figure)
    return items


def _add_runs(
    inputs: ForecastInputs, seen: _Observed, items: dict[int, float], owned: set[int]
) -> None:
    """Add each item's runs: unattributed hours to its column, finished full runs to its total."""
    for run in inputs.timeline.runs:
        took = observed_hours.run_hours(run)
        if run.variant_id is None or took is None:
            continue
        if observed_hours.claim_of(run, seen.reconciled.claims) not in owned:
            # Claimed by a campaign-wide stage, or by none: still this item's hours.
            items[run.variant_id] += float(took)
        if run.kind != RUN_PILOT and run.status in FINISHED_RUNS:
            seen.full_runs[run.variant_id] = seen.full_runs.get(run.variant_id, 0.0) + float(took)


def _prefer_claimed_full_runs(seen: _Observed) -> None:
    """A stage claiming an item's full run reports it reconciled: its figure wins over the sum."""
    for (item_id, kind), stage_id in seen.reconciled.claims.items():
        figure = seen.reconciled.hours(stage_id)
        if item_id in seen.full_runs and kind == "full" and figure is not None:
            seen.full_runs[item_id] = float(figure)


def _observed(inputs: ForecastInputs) -> _Observed:
    reconciled = timeline.observe(inputs.timeline)
    seen = _Observed(reconciled)
    stages = timeline.plan_stages(inputs.timeline)
    items = _stage_items(stages, reconciled)
    owned = {s.id for s in stages if s.variant_id is not None}
    _add_runs(inputs, seen, items, owned)
    seen.items = dict(items)
    _prefer_claimed_full_runs(seen)
    return seen


# --------------------------------------------------------------------------- per item


@dataclass
class _ItemsPass:
    forecasts: list[ItemForecast] = field(default_factory=list)
    # Forecast over reserved hours, for the item's stages.
    factor: dict[int, float] = field(default_factory=dict)
    memory: dict[int, int] = field(default_factory=dict)
    advice: list[str] = field(default_factory=list)
    calibrated: list[dict[str, Any]] = field(default_factory=list)


def _hours(
    inputs: ForecastInputs, item: ItemInput, seen: _Observed, out: _ItemsPass
) -> tuple[float, str, str]:
    """The item's forecast hours, their source and the note (the rule in the docstring)."""
    planned = float(item.planned_hours)
    sample = inputs.pilots.get(item.id)
    observed = seen.items.get(item.id)
    if item.status == ITEM_CUT:
        return 0.0, ASSUMED, "cut by a decision: no hours forecast"
    if item.id in seen.full_runs:
        # The training itself happened: what it took replaces any assumption or pilot.
        hours = seen.full_runs[item.id]
        return hours, OBSERVED, f"its run is finished: {fmt_hours(hours)} h observed"
    if item.status == ITEM_DONE and observed is not None:
        return observed, OBSERVED, f"done: {fmt_hours(observed)} h observed"
    if sample is not None:
        measured, note = pilot_hours(item, sample)
        if measured is not None:
            return measured, PILOT, note
        # A pilot the item's row cannot use must not leave the forecast less informed than
        # before it: the team's calibration still applies (issue 18; docs/domain.md §20).
        hours, source, calibrated_note = forecast_calibration.item_hours(
            inputs, item, planned, out.calibrated, why=note
        )
        return (
            (hours, source, calibrated_note) if source == CALIBRATED else (planned, ASSUMED, note)
        )
    return forecast_calibration.item_hours(inputs, item, planned, out.calibrated)


def _forecast_item(
    inputs: ForecastInputs,
    item: ItemInput,
    seen: _Observed,
    reserved_items: Mapping[int, float] | None,
    out: _ItemsPass,
) -> None:
    planned = float(item.planned_hours)
    sample = inputs.pilots.get(item.id)
    observed = seen.items.get(item.id)
    calc, calc_note = calculator(item, inputs.gpus, sample)
    if calc is not None and calc["memory_per_device_bytes"]:
        out.memory[item.id] = int(calc["memory_per_device_bytes"])
    hours, source, note = _hours(inputs, item, seen, out)
    if calc_note:
        note = f"{note}; {calc_note}"
    # The baseline's hours once committed (None: added after commit), else the plan's.
    reserved = planned if reserved_items is None else reserved_items.get(item.id)
    # The item's stages were planned for the reserved hours (frozen at commit; an
    # amendment changes the item, not its stages): scale them from that basis.
    basis = reserved if reserved is not None else planned
    if basis > 0 and abs(hours - basis) > 1e-9:
        out.factor[item.id] = hours / basis
    if source == PILOT or (sample is not None and source in (ASSUMED, CALIBRATED)):
        out.advice.append(f"{item.name}: {note}.")
    out.forecasts.append(
        ItemForecast(
            id=item.id,
            name=item.name,
            tier=item.tier,
            role=item.role,
            status=item.status,
            gpu=item.gpu,
            planned_hours=planned,
            reserved_hours=reserved,
            forecast_hours=hours,
            observed_hours=observed,
            time_source=source,
            note=note,
            pilot=sample.as_json() if sample is not None else None,
            calculator=calc,
            config=dict(item.config),
        )
    )


def _forecast_items(inputs: ForecastInputs, seen: _Observed) -> _ItemsPass:
    out = _ItemsPass()
    reserved_items = None
    if inputs.timeline.committed_items is not None:
        reserved_items = {b.id: float(b.planned_hours) for b in inputs.timeline.committed_items}
    for item in inputs.items:
        _forecast_item(inputs, item, seen, reserved_items, out)
    added = [f.name for f in out.forecasts if f.reserved_hours is None]
    if added:
        out.advice.append(
            f"Added after commit, not in the frozen baseline: {', '.join(added)} "
            "(reserved 0 h for them)."
        )
    return out


# --------------------------------------------------------------------------- the calendar


def _with_forecasts(plan: TimelineInputs, forecasts: Sequence[ItemForecast]) -> TimelineInputs:
    """The timeline's inputs with each item's forecast work hours (the rule above)."""
    hours = {f.id: f.forecast_hours for f in forecasts}
    items = tuple(replace(i, forecast_hours=hours.get(i.id)) for i in plan.items)
    return replace(plan, items=items)


# --------------------------------------------------------------------------- lot work


_Groups = dict[str, dict[str, list[timeline.StageLine]]]


def _by_resource(line: timeline.Timeline, items: Mapping[int, ItemInput]) -> _Groups:
    """Machine stages with hours, per resource, per entry (an item, or a stage of no item)."""
    groups: _Groups = defaultdict(lambda: defaultdict(list))
    for s in line.stages:
        if s.machine and s.hours > 0:
            key = f"item:{s.variant_id}" if s.variant_id in items else f"stage:{s.id}"
            groups[s.resource or calendar.UNASSIGNED_RESOURCE][key].append(s)
    return groups


def _group_gpu(
    entries: Mapping[str, list[timeline.StageLine]],
    items: Mapping[int, ItemInput],
    reserved_gpu: str | None,
) -> str | None:
    """The resource's GPU: the one most of its items name, else the reservation's."""
    linked = [items[s.variant_id] for g in entries.values() for s in g if s.variant_id in items]  # type: ignore[index]
    gpus = Counter(item.gpu for item in linked if item.gpu)
    return gpus.most_common(1)[0][0] if gpus else reserved_gpu


def _entry(
    resource: str,
    key: str,
    group: list[timeline.StageLine],
    item: ItemInput | None,
    group_gpu: str | None,
    memory: Mapping[int, int],
) -> lot_selection.PlanItem:
    """One entry; a stage of no item is mandatory work on the resource's GPU."""
    if item is None:
        return lot_selection.PlanItem(
            key=f"{resource}/{key}",
            machine_hours=sum(s.hours for s in group),
            gpu=group_gpu,
            gpus_needed=1,
            memory_bytes_per_gpu=None,
            tier="mandatory",
            group=resource,
            name=group[0].name,
        )
    return lot_selection.PlanItem(
        key=f"{resource}/{key}",
        machine_hours=sum(s.hours for s in group),
        gpu=item.gpu or group_gpu,
        gpus_needed=count(item.config.get("gpus")) or 1,
        memory_bytes_per_gpu=memory.get(item.id),
        tier=item.tier,  # type: ignore[arg-type]
        group=resource,
        name=item.name,
    )


def _stage_work(
    line: timeline.Timeline,
    items: Mapping[int, ItemInput],
    memory: Mapping[int, int],
    reserved_gpu: str | None,
) -> list[lot_selection.PlanItem]:
    """Machine work as lot-selection items: one group per resource (its stages run one after
    another on one lot); an item's stages on a resource become one entry, so a cut names it."""
    out: list[lot_selection.PlanItem] = []
    for resource, entries in _by_resource(line, items).items():
        group_gpu = _group_gpu(entries, items, reserved_gpu)
        for key, group in entries.items():
            item = items.get(group[0].variant_id) if key.startswith("item:") else None  # type: ignore[arg-type]
            out.append(_entry(resource, key, group, item, group_gpu, memory))
    return out


# --------------------------------------------------------------------------- the forecast


def _time_source(forecasts: Sequence[ItemForecast]) -> str:
    live = [f for f in forecasts if f.status != ITEM_CUT]
    source = PILOT if any(f.time_source == PILOT for f in live) else ASSUMED
    if source == ASSUMED and any(f.time_source == CALIBRATED for f in live):
        source = CALIBRATED
    return source


def _recorded_inputs(inputs: ForecastInputs) -> dict[str, Any]:
    return {
        "window_hours": h(inputs.window_hours),
        "committed": inputs.committed,
        "baseline_digest": inputs.baseline_digest,
        "items": len(inputs.items),
        "stages": len(inputs.timeline.stages),
        "pilot_samples": {str(k): v.sample_id for k, v in inputs.pilots.items()},
        "currency": inputs.currency,
        "budget": None if inputs.budget is None else str(inputs.budget),
    }


def _figures(
    inputs: ForecastInputs, forecasts: Sequence[ItemForecast], line: timeline.Timeline
) -> dict[str, float]:
    """The plan's named figures (campaigns/domain/plan_figures.py, docs/domain.md §8.5) with the
    forecast hours in place of the planned ones, and the machine time the lots must hold."""
    by_id = {i.id: i for i in inputs.items}
    figures = plan_figures.plan_figures(
        [
            plan_figures.ItemWork(
                Decimal(str(f.forecast_hours)),
                Decimal(str(by_id[f.id].prep_hours)),
                count(by_id[f.id].config.get("gpus")),
                f.status == ITEM_CUT,
            )
            for f in forecasts
        ],
        calendar_hours=Decimal(str(line.hours)),
        lots=(),
        window_hours=Decimal(str(inputs.window_hours)),
    )
    return {
        "work_hours": float(figures.work_hours),
        "gpu_hours": float(figures.gpu_hours),
        "calendar_hours": float(figures.calendar_hours),
        "machine_hours": h(line.machine_hours),
        # Of the machine time, the stages tied to no item (setup, loading, retrieval).
        "untied_machine_hours": h(line.untied_machine_hours),
    }


def _lot_work(
    inputs: ForecastInputs, line: timeline.Timeline, memory: Mapping[int, int]
) -> list[lot_selection.PlanItem]:
    reserved_gpus = {lot.gpu for lot in inputs.lots}
    only_gpu = next(iter(reserved_gpus)) if len(reserved_gpus) == 1 else None
    return _stage_work(line, {i.id: i for i in inputs.items}, memory, only_gpu)


def _committed_machine_hours(line: timeline.Timeline) -> float:
    return sum(s.planned_hours or 0.0 for s in line.stages if s.machine)


def compute(inputs: ForecastInputs) -> Forecast:
    """Reserved, forecast and observed hours per item and in total, the window and lot advice
    (the rule in the module docstring)."""
    seen = _observed(inputs)
    items = _forecast_items(inputs, seen)
    plan, applied = forecast_calibration.stage_factors(inputs)
    line = timeline.build(_with_forecasts(plan, items.forecasts))
    lots, lot_lines = lot_advice(
        currency=inputs.currency,
        budget=inputs.budget,
        reserved_lots=inputs.lots,
        offers=inputs.offers,
        work=_lot_work(inputs, line, items.memory),
        reserved_machine_hours=_committed_machine_hours(line),
        forecast_hours=line.hours,
        window=inputs.window_hours,
    )
    figures = _figures(inputs, items.forecasts, line)
    # The calendar's own troubles (a cycle, a GPU past the window, items without a stage) are
    # the plan's warnings (docs/domain.md §7.8), listed once, not repeated here.
    advice = list(items.advice)
    if not inputs.pilots and any(f.status != ITEM_CUT for f in items.forecasts):
        advice.append(
            "No pilot throughput yet: every forecast is the planned figure; log a pilot "
            "(POST /runs/{run_id}/throughput/) to replace it with a measurement."
        )
    title = headline(line, lots)
    forecasts = tuple(items.forecasts)
    return Forecast(
        timeline=line,
        items=forecasts,
        time_source=_time_source(forecasts),
        advice=(title, figures_line(figures), *advice, *lot_lines),
        headline=title,
        figures=figures,
        lots=lots,
        calibration=(*items.calibrated, *forecast_calibration.stage_rows(line, applied)),
        inputs=_recorded_inputs(inputs),
        committed=inputs.committed,
        warnings=plan_warnings(inputs.items, forecasts, line, title),
    )
