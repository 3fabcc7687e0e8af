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
   there are 3 observations ("calibrated", §20), else as planned ("assumed").

Reserved hours are the frozen baseline's once committed (the plan is never rewritten), else the
plan's. An item's machine stages scale by forecast / reserved (its training stages only, when it
has any); a stage's observed hours (reconciled with its runs once, §8.6) replace its planned
ones; the totals are the calendar's makespan (§7), stages not tied to an item (setup,
retrieval) in the totals only. Without a calendar, items run one after another.

Units: hours are floats (wall hours), planned figures arrive as Decimal; money stays Decimal.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from campaigns.domain import calendar, observed_hours, plan_figures
from campaigns.domain.formatting import format_hours as fmt_hours
from catalog.domain.catalog import GpuModel
from catalog.domain.gpu_names import normalize_gpu
from estimates.domain import calibration, formulas
from estimates.domain import lot_selection as plans
from estimates.domain.forecast_advice import (
    count,
    figures_line,
    headline,
    lot_advice,
    pilot_hours,
)
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
    PilotInput,
    StageInput,
    h,
)

# The pilot measures training throughput: it rescales an item's training stages, not its
# validation or checkpoint stages (unless the item has no training stage at all).
_SCALED_KINDS = frozenset({"training"})


@dataclass
class _Observed:
    """Observed hours, reconciled once (campaigns/domain/observed_hours.py, §8.6): each stage's
    figure (its runs', or what was typed where it differs, with the reason), and the ended runs
    no stage claims."""

    reconciled: observed_hours.Reconciled
    # Per item: its stages' figures plus its unattributed runs (the forecast's column).
    items: dict[int, float] = field(default_factory=dict)
    # Per item: what its finished full runs took (the stage claiming them, when there is one).
    full_runs: dict[int, float] = field(default_factory=dict)

    def stage(self, stage_id: int) -> float | None:
        found = self.reconciled.hours(stage_id)
        return None if found is None else float(found)

    @property
    def total(self) -> float:
        return float(self.reconciled.total)


def _observed(inputs: ForecastInputs) -> _Observed:
    reconciled = observed_hours.reconcile(
        (
            observed_hours.StageRow(s.id, s.variant_id, s.kind, s.observed_hours, s.observed_reason)
            for s in inputs.stages
        ),
        inputs.runs,
    )
    seen = _Observed(reconciled)
    items: dict[int, float] = defaultdict(float)
    for s in inputs.stages:
        figure = reconciled.hours(s.id)
        if figure is not None and s.variant_id is not None:
            items[s.variant_id] += float(figure)
    for item_id, hours in reconciled.unattributed.items():
        if item_id is not None:
            items[item_id] += float(hours)
    seen.items = dict(items)
    for run in inputs.runs:
        took = observed_hours.run_hours(
            observed_hours.RunRow(run.variant_id, run.kind, run.status, run.observed_hours)
        )
        if run.variant_id is None or run.kind == RUN_PILOT or took is None:
            continue
        if run.status in FINISHED_RUNS:
            seen.full_runs[run.variant_id] = seen.full_runs.get(run.variant_id, 0.0) + float(took)
    for (item_id, kind), stage_id in reconciled.claims.items():
        figure = reconciled.hours(stage_id)
        if kind == "full" and item_id in seen.full_runs and figure is not None:
            seen.full_runs[item_id] = float(figure)
    return seen


# --------------------------------------------------------------------------- the calculator


def _estimate_input_pilot(sample: PilotInput | None) -> formulas.PilotSpec | None:
    if sample is None:
        return None
    return formulas.PilotSpec(
        tokens_per_second=sample.tokens_per_second,
        samples_per_second=None if sample.tokens_per_second else sample.samples_per_second,
        gpus=sample.gpus,
    )


def _estimate_input(
    cfg: Mapping[str, Any], gpu: GpuModel, sample: PilotInput | None
) -> formulas.EstimateInput:
    pilot = _estimate_input_pilot(sample)
    return formulas.EstimateInput(
        model=formulas.ModelSpec(
            parameters=cfg["parameters"],
            layers=cfg.get("layers"),
            hidden_size=cfg.get("hidden_size"),
            attention_heads=cfg.get("attention_heads"),
            vocab_size=cfg.get("vocab_size"),
        ),
        training=formulas.TrainingSpec(
            tokens=cfg.get("tokens"),
            samples=cfg.get("samples"),
            tokens_per_sample=cfg.get("tokens_per_sample"),
            epochs=cfg.get("epochs", 1.0),
            sequence_length=cfg.get("sequence_length", 2048),
            micro_batch_size=cfg.get("micro_batch_size", 1),
            precision=cfg.get("precision", "bf16"),
            optimizer=cfg.get("optimizer", "adamw"),
            activation_checkpointing=bool(cfg.get("activation_checkpointing", False)),
            flash_attention=bool(cfg.get("flash_attention", False)),
        ),
        hardware=formulas.HardwareSpec(
            gpu=gpu,
            count=cfg.get("gpus", 1),
            utilization=cfg.get("utilization", 0.4),
            zero_stage=cfg.get("zero_stage", 0),
            tensor_parallel=cfg.get("tensor_parallel", 1),
            pipeline_parallel=cfg.get("pipeline_parallel", 1),
        ),
        pilot=pilot,
    )


def calculator(
    item: ItemInput, gpus: Mapping[str, GpuModel], sample: PilotInput | None
) -> tuple[dict[str, Any] | None, str]:
    """The stateless calculator applied to the item's config, when it describes a model.

    Only with `parameters` in the config; it is advisory (memory fit, assumed time) and never
    replaces the planned or pilot hours.
    """
    cfg = item.config
    spec = item.estimate_spec
    if (spec is None and "parameters" not in cfg) or not item.gpu:
        return None, ""
    gpu = gpus.get(normalize_gpu(item.gpu))
    if gpu is None:
        return None, f"the calculator skipped it: GPU {item.gpu!r} is not in the catalog"
    try:
        # h17 (docs/domain.md §24.9): the item's estimate_spec is the input when it has one.
        inp = (
            _estimate_input(cfg, gpu, sample)
            if spec is None
            else formulas.input_from_spec(spec, gpu, _estimate_input_pilot(sample), work=cfg)
        )
        result = formulas.estimate(inp)
    except (formulas.EstimateInputError, TypeError, ValueError) as exc:
        # Free-form config: a value of the wrong type is the planner's to fix, not a failure.
        return None, f"the calculator could not use its config ({exc})"
    return {
        "time_source": result.time_source,
        "training_flops": result.training_flops,
        "wall_hours": h(result.wall_hours),
        "gpu_hours": h(result.gpu_hours),
        "memory_per_device_bytes": result.memory.total,
        "device_memory_bytes": result.device_memory_bytes,
        "fits_in_memory": result.fits_in_memory,
        "first_recommendation": result.recommendations[0] if result.recommendations else "",
    }, ""


# --------------------------------------------------------------------------- per item


@dataclass
class _ItemsPass:
    forecasts: list[ItemForecast] = field(default_factory=list)
    # Forecast over reserved hours, for the item's stages.
    factor: dict[int, float] = field(default_factory=dict)
    memory: dict[int, int] = field(default_factory=dict)
    advice: list[str] = field(default_factory=list)
    calibrated: list[dict[str, Any]] = field(default_factory=list)


def _calibrated(
    inputs: ForecastInputs,
    item: ItemInput,
    planned: float,
    out: _ItemsPass,
    why: str = "no pilot yet",
) -> tuple[float, str, str]:
    hours, source = planned, ASSUMED
    note = f"{why}: the planned {fmt_hours(planned)} h are assumed"
    found = calibration.applicable(
        inputs.calibrations, "training", calibration.gpu_in(item.gpu, inputs.known_gpus)
    )
    if found is None or planned <= 0:
        return hours, source, note
    hours, source = planned * found.median, CALIBRATED
    note = (
        f"{why}: the planned {fmt_hours(planned)} h × {found.median:.2f}, the "
        f"median observed/estimated of {found.count} training stages in "
        f"{found.source_names()}"
    )
    out.calibrated.append(
        {
            "item": item.name,
            "raw_hours": h(planned),
            "calibrated_hours": h(hours),
            "median_ratio": round(found.median, 4),
            "count": found.count,
            "source_campaigns": [{"id": pk, "title": title} for pk, title in found.sources],
        }
    )
    return hours, source, note


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
        hours, source, calibrated_note = _calibrated(inputs, item, planned, out, why=note)
        return (
            (hours, source, calibrated_note) if source == CALIBRATED else (planned, ASSUMED, note)
        )
    return _calibrated(inputs, item, planned, out)


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
    if calc is not None and not calc["fits_in_memory"]:
        out.advice.append(f"{item.name}: {calc['first_recommendation']}")
    elif calc is not None and source == ASSUMED and calc["wall_hours"] > planned * 1.1:
        out.advice.append(
            f"{item.name}: the calculator expects {fmt_hours(calc['wall_hours'])} h at the "
            f"assumed utilization, more than the {fmt_hours(planned)} h planned."
        )
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
    if inputs.baseline is not None:
        reserved_items = {b.id: b.planned_hours for b in inputs.baseline.items}
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


def stage_hours(
    stages: Sequence[StageInput],
    items: Mapping[int, ItemInput],
    factor: Mapping[int, float],
    observed: Mapping[int, float | None] | None = None,
) -> dict[int, float]:
    """Forecast stage hours: observed where it happened, cut items drop out, the rest scales."""
    scaled: set[int] = set()
    linked: dict[int, list[StageInput]] = defaultdict(list)
    for s in stages:
        if s.variant_id is not None and s.machine:
            linked[s.variant_id].append(s)
    for group in linked.values():
        training = [s for s in group if s.kind in _SCALED_KINDS]
        scaled.update(s.id for s in (training or group))
    hours: dict[int, float] = {}
    for s in stages:
        item = items.get(s.variant_id) if s.variant_id is not None else None
        # The reconciled figure (§8.6) when given, else what the stage says it took.
        seen = observed.get(s.id) if observed is not None else s.observed_hours
        if seen is not None:
            hours[s.id] = float(seen)
        elif item is not None and item.status == ITEM_CUT:
            hours[s.id] = 0.0
        elif item is not None and s.id in scaled and item.id in factor:
            hours[s.id] = float(s.planned_hours) * factor[item.id]
        else:
            hours[s.id] = float(s.planned_hours)
    return hours


@dataclass
class _Totals:
    forecast: float
    reserved: float
    observed: float
    critical: tuple[str, ...] = ()
    reserved_machine: float | None = None
    advice: list[str] = field(default_factory=list)


def _calendars(
    inputs: ForecastInputs, hours: Mapping[int, float]
) -> tuple[list[calendar.Stage], list[calendar.Stage]]:
    """The forecast calendar, and the reserved one (the baseline's, else the plan's)."""
    keys = {s.id: s.key for s in inputs.stages}
    forecast_stages = [
        calendar.Stage(
            key=s.key,
            name=s.name,
            kind=s.kind,
            machine=s.machine,
            resource=s.resource or None,
            planned_hours=hours[s.id],
            depends_on=tuple(keys[d] for d in s.depends_on),
        )
        for s in inputs.stages
    ]
    if inputs.baseline is not None:
        return forecast_stages, list(inputs.baseline.stages)
    reserved_stages = [
        calendar.Stage(
            key=st.key,
            name=st.name,
            kind=st.kind,
            machine=st.machine,
            resource=st.resource,
            planned_hours=float(s.planned_hours),
            depends_on=st.depends_on,
        )
        for st, s in zip(forecast_stages, inputs.stages, strict=True)
    ]
    return forecast_stages, reserved_stages


def _calendar_totals(
    inputs: ForecastInputs, hours: Mapping[int, float], seen: _Observed
) -> _Totals:
    forecast_stages, reserved_stages = _calendars(inputs, hours)
    window = inputs.window_hours
    advice: list[str] = []
    critical: tuple[str, ...] = ()
    try:
        plan = calendar.schedule(forecast_stages, window)
        forecast_total, critical = plan.makespan_hours, plan.critical_path
        reserved_total = calendar.schedule(reserved_stages, window).makespan_hours
    except ValueError as exc:
        # A cycle is the planner's to fix; meanwhile count every stage one after another.
        advice.append(f"The calendar cannot be scheduled ({exc}): stages counted in sequence.")
        forecast_total = sum(st.planned_hours for st in forecast_stages)
        reserved_total = sum(st.planned_hours for st in reserved_stages)
    advice.extend(
        load.message
        for load in calendar.resource_loads(forecast_stages, window)
        if load.exceeds_window
    )
    staged = {s.variant_id for s in inputs.stages if s.variant_id is not None}
    loose = [
        i.name
        for i in inputs.items
        if i.id not in staged and i.status != ITEM_CUT and i.planned_hours > 0
    ]
    if loose:
        advice.append(
            f"No calendar stage for {', '.join(loose)}: their hours are not in the calendar; "
            "add a stage for each."
        )
    return _Totals(
        forecast=forecast_total,
        reserved=reserved_total,
        observed=seen.total,
        critical=critical,
        reserved_machine=sum(st.planned_hours for st in reserved_stages if st.machine),
        advice=advice,
    )


def _sequential_totals(
    inputs: ForecastInputs, forecasts: Sequence[ItemForecast], seen: _Observed
) -> _Totals:
    """Without a calendar, items run one after another (as the plan summary counts them)."""
    prep = {i.id: float(i.prep_hours) for i in inputs.items}
    forecast_total = sum(f.forecast_hours + prep[f.id] for f in forecasts)
    if inputs.baseline is not None:
        reserved_total = sum(
            b.planned_hours + b.prep_hours for b in inputs.baseline.items if b.status != ITEM_CUT
        )
    else:
        reserved_total = sum(
            float(i.planned_hours + i.prep_hours) for i in inputs.items if i.status != ITEM_CUT
        )
    return _Totals(
        forecast=forecast_total,
        reserved=reserved_total,
        observed=seen.total,
    )


# --------------------------------------------------------------------------- lot work


def _stage_work(
    stages: Sequence[StageInput],
    hours: Mapping[int, float],
    items: Mapping[int, ItemInput],
    memory: Mapping[int, int],
    reserved_gpu: str | None,
) -> list[plans.PlanItem]:
    """Machine work as lot-selection items: one group per resource (its stages run one after
    another on one lot); an item's stages on a resource become one entry, so a cut names it."""
    by_resource: dict[str, dict[str, list[StageInput]]] = defaultdict(lambda: defaultdict(list))
    for s in stages:
        if s.machine and hours[s.id] > 0:
            key = f"item:{s.variant_id}" if s.variant_id in items else f"stage:{s.id}"
            by_resource[s.resource or calendar.UNASSIGNED_RESOURCE][key].append(s)
    out: list[plans.PlanItem] = []
    for resource, entries in by_resource.items():
        linked = [items[s.variant_id] for g in entries.values() for s in g if s.variant_id in items]  # type: ignore[index]
        gpus = Counter(item.gpu for item in linked if item.gpu)
        group_gpu = gpus.most_common(1)[0][0] if gpus else reserved_gpu
        for key, group in entries.items():
            item = items.get(group[0].variant_id) if key.startswith("item:") else None  # type: ignore[arg-type]
            out.append(
                plans.PlanItem(
                    key=f"{resource}/{key}",
                    machine_hours=sum(hours[s.id] for s in group),
                    gpu=(item.gpu if item is not None and item.gpu else None) or group_gpu,
                    gpus_needed=(count(item.config.get("gpus")) if item else None) or 1,
                    memory_bytes_per_gpu=memory.get(item.id) if item is not None else None,
                    tier=item.tier if item is not None else "mandatory",  # type: ignore[arg-type]
                    group=resource,
                    name=item.name if item is not None else group[0].name,
                )
            )
    return out


def _item_work(
    forecasts: Sequence[ItemForecast], items: Mapping[int, ItemInput], memory: Mapping[int, int]
) -> list[plans.PlanItem]:
    """One group per GPU model: without stages the items run one after another."""
    return [
        plans.PlanItem(
            key=f"item:{f.id}",
            machine_hours=f.forecast_hours,
            gpu=f.gpu or None,
            gpus_needed=count(items[f.id].config.get("gpus")) or 1,
            memory_bytes_per_gpu=memory.get(f.id),
            tier=f.tier,  # type: ignore[arg-type]
            group=f"gpu:{f.gpu or 'any'}",
            name=f.name,
        )
        for f in forecasts
        if f.status != ITEM_CUT and f.forecast_hours > 0
    ]


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
        "committed": inputs.baseline is not None,
        "baseline_digest": inputs.baseline.digest if inputs.baseline is not None else None,
        "items": len(inputs.items),
        "stages": len(inputs.stages),
        "pilot_samples": {str(k): v.sample_id for k, v in inputs.pilots.items()},
        "currency": inputs.currency,
        "budget": None if inputs.budget is None else str(inputs.budget),
    }


def _figures(
    inputs: ForecastInputs,
    forecasts: Sequence[ItemForecast],
    calendar_hours: float,
    stage_forecast: Mapping[int, float] | None,
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
        calendar_hours=Decimal(str(calendar_hours)),
        lots=(),
        window_hours=Decimal(str(inputs.window_hours)),
    )
    if stage_forecast is None:
        machine, untied = float(figures.work_hours), 0.0
    else:
        machine = sum(stage_forecast[s.id] for s in inputs.stages if s.machine)
        untied = sum(
            stage_forecast[s.id] for s in inputs.stages if s.machine and s.variant_id not in by_id
        )
    return {
        "work_hours": float(figures.work_hours),
        "gpu_hours": float(figures.gpu_hours),
        "calendar_hours": float(figures.calendar_hours),
        "machine_hours": h(machine),
        # Of the machine time, the stages tied to no item (setup, loading, retrieval).
        "untied_machine_hours": h(untied),
    }


def compute(inputs: ForecastInputs) -> Forecast:
    """Reserved, forecast and observed hours per item and in total, the window and lot advice
    (the rule in the module docstring)."""
    window = inputs.window_hours
    by_id = {i.id: i for i in inputs.items}
    seen = _observed(inputs)
    items = _forecast_items(inputs, seen)
    if inputs.stages:
        hours = stage_hours(
            inputs.stages, by_id, items.factor, {s.id: seen.stage(s.id) for s in inputs.stages}
        )
        totals = _calendar_totals(inputs, hours, seen)
        reserved_gpus = {lot.gpu for lot in inputs.lots}
        only_gpu = next(iter(reserved_gpus)) if len(reserved_gpus) == 1 else None
        work = _stage_work(inputs.stages, hours, by_id, items.memory, only_gpu)
    else:
        totals = _sequential_totals(inputs, items.forecasts, seen)
        work = _item_work(items.forecasts, by_id, items.memory)
    lots, lot_lines = lot_advice(
        currency=inputs.currency,
        budget=inputs.budget,
        reserved_lots=inputs.lots,
        offers=inputs.offers,
        work=work,
        reserved_machine_hours=totals.reserved_machine,
        forecast_hours=totals.forecast,
        window=window,
    )
    figures = _figures(inputs, items.forecasts, totals.forecast, hours if inputs.stages else None)
    advice = [*items.advice, *totals.advice]
    if not inputs.pilots and any(f.status != ITEM_CUT for f in items.forecasts):
        advice.append(
            "No pilot throughput yet: every forecast is the planned figure; log a pilot "
            "(POST /runs/{run_id}/throughput/) to replace it with a measurement."
        )
    return Forecast(
        window_hours=window,
        committed=inputs.baseline is not None,
        reserved_hours=totals.reserved,
        forecast_hours=totals.forecast,
        observed_hours=totals.observed,
        items=tuple(items.forecasts),
        time_source=_time_source(items.forecasts),
        advice=(
            headline(totals.forecast, totals.reserved, window),
            figures_line(figures),
            *advice,
            *lot_lines,
        ),
        figures=figures,
        lots=lots,
        critical_path=totals.critical,
        calibration=tuple(items.calibrated),
        inputs=_recorded_inputs(inputs),
    )
