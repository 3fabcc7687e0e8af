"""Campaign forecasts: reserved vs forecast vs observed hours, persisted as `Estimate` rows.

The flow (docs/domain.md §7-§10):

1. A plan change or a pilot throughput calls `estimates.services.mark_stale(campaign_id)`
   (from `estimates.signals`):
   it bumps the campaign estimate's `input_version`, marks every estimate of the campaign stale
   and, once the transaction commits, enqueues `estimates.tasks.recompute_forecast`.
2. The task calls `recompute(campaign_id, version)`: `compute_forecast(campaign)` reads the plan
   and computes with the pure modules (calendar, lot selection, formulas); `land_forecast()`
   writes the result in one transaction, and only if `version` is still the current input
   version and has not landed yet. A superseded or duplicate delivery is therefore a no-op.
3. `stale_estimates()` lists estimates stale for too long; the periodic sweep re-enqueues them, so
   a lost message or a killed worker never leaves a forecast stale for good.

Hours are floats here (they come from the pure modules); money stays Decimal and is written as a
string. Per-item figures are the item's own machine hours; the totals are the calendar end to end
(stages not tied to an item, such as setup or retrieval, count in the totals only).
"""

from __future__ import annotations

import logging
import math
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from decimal import Decimal
from typing import Any

from django.db import transaction
from django.db.models import QuerySet, Value
from django.db.models.functions import Coalesce
from django.template.loader import render_to_string
from django.utils import timezone
from django.utils.safestring import SafeString

from campaigns.domain import calendar
from campaigns.models import (
    WORK_FIELDS,
    Campaign,
    CampaignStatus,
    ItemStatus,
    LotReservation,
    PlanBaseline,
    PlannedItem,
    RunKind,
    RunStatus,
    Stage,
    ThroughputSample,
)
from campaigns.selectors.plan_summary import fmt_hours, stage_keys
from catalog.domain.gpu_names import normalize_gpu
from catalog.models import GpuModel, RentalPlan
from estimates.domain import calibration, formulas
from estimates.domain import lot_selection as plans
from estimates.models import Estimate, EstimateStatus, plan_offer
from estimates.selectors.calibration import team_calibrations

log = logging.getLogger(__name__)

PILOT = "pilot"
ASSUMED = "assumed"
OBSERVED = "observed"
# The team's median observed/estimated ratio applied to a planned figure (docs/domain.md §20).
CALIBRATED = "calibrated"

# The pilot measures training throughput: it rescales an item's training stages, not its
# validation or checkpoint stages (unless the item has no training stage at all).
_SCALED_KINDS = frozenset({"training"})
_FINISHED_RUNS = frozenset({RunStatus.COMPLETED, RunStatus.STOPPED, RunStatus.FAILED})


def _h(hours: float) -> float:
    """Hours as shown: two decimals, never -0.0."""
    return round(hours, 2) + 0.0


def _number(value: Any) -> float | None:
    """A finite positive number from a free-form config value, else None."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    number = float(value)
    return number if math.isfinite(number) and number > 0 else None


def _count(value: Any) -> int | None:
    number = _number(value)
    return int(number) if number is not None and number == int(number) else None


def _config(item: PlannedItem) -> dict[str, Any]:
    """The item's config with its work fields (tokens, samples, epochs, assumed throughput,
    GPUs) over any config key of the same name: the fields are the inputs, the keys are only
    read for items that still carry them (docs/domain.md §10)."""
    cfg = dict(item.config) if isinstance(item.config, dict) else {}
    for name in WORK_FIELDS:
        value = getattr(item, name, None)
        if value is not None:
            cfg[name] = value
    return cfg


def _rate(value: float) -> str:
    return f"{value:,.0f}" if value >= 100 else f"{value:.3g}"


# --------------------------------------------------------------------------- the result


@dataclass(frozen=True)
class ItemForecast:
    id: int
    name: str
    tier: str
    role: str
    status: str
    gpu: str
    planned_hours: float
    # None: the item is not in the frozen baseline (added after commit).
    reserved_hours: float | None
    forecast_hours: float
    observed_hours: float | None
    time_source: str
    note: str
    pilot: dict[str, Any] | None = None
    calculator: dict[str, Any] | None = None
    # What the item's estimate row records as its inputs (not shown in the forecast).
    config: dict[str, Any] = field(default_factory=dict)

    def as_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "name": self.name,
            "tier": self.tier,
            "role": self.role,
            "status": self.status,
            "gpu": self.gpu,
            "planned_hours": _h(self.planned_hours),
            "reserved_hours": None if self.reserved_hours is None else _h(self.reserved_hours),
            "forecast_hours": _h(self.forecast_hours),
            "observed_hours": None if self.observed_hours is None else _h(self.observed_hours),
            "time_source": self.time_source,
            "note": self.note,
            "pilot": self.pilot,
            "calculator": self.calculator,
        }


@dataclass(frozen=True)
class Forecast:
    window_hours: float
    committed: bool
    reserved_hours: float
    forecast_hours: float
    observed_hours: float
    items: tuple[ItemForecast, ...]
    time_source: str
    advice: tuple[str, ...]
    lots: dict[str, Any]
    critical_path: tuple[str, ...] = ()
    inputs: dict[str, Any] = field(default_factory=dict)
    # Items whose planned hours were calibrated: raw and calibrated figures, and the sources.
    calibration: tuple[dict[str, Any], ...] = ()

    @property
    def fits_in_window(self) -> bool:
        return self.forecast_hours <= self.window_hours + 1e-9

    def as_json(self) -> dict[str, Any]:
        sources = Counter(i.time_source for i in self.items if i.status != ItemStatus.CUT)
        return {
            "window_hours": _h(self.window_hours),
            "committed": self.committed,
            "reserved_basis": "baseline" if self.committed else "plan",
            "totals": {
                "reserved_hours": _h(self.reserved_hours),
                "forecast_hours": _h(self.forecast_hours),
                "observed_hours": _h(self.observed_hours),
            },
            "fits_in_window": self.fits_in_window,
            "uncommitted_hours": _h(self.window_hours - self.forecast_hours),
            "over_hours": _h(max(0.0, self.forecast_hours - self.window_hours)),
            "time_source": self.time_source,
            "time_sources": {k: sources.get(k, 0) for k in (PILOT, ASSUMED, OBSERVED, CALIBRATED)},
            "critical_path": list(self.critical_path),
            "items": [i.as_json() for i in self.items],
            "lots": self.lots,
            "advice": list(self.advice),
            "calibration": list(self.calibration),
        }


# --------------------------------------------------------------------------- per item


def _latest_pilots(campaign: Campaign) -> dict[int, ThroughputSample]:
    """The most recent pilot measurement of each item (a newer pilot supersedes older ones)."""
    latest: dict[int, ThroughputSample] = {}
    samples = (
        ThroughputSample.objects.filter(
            run__campaign=campaign, run__kind=RunKind.PILOT, run__variant__isnull=False
        )
        .select_related("run")
        .order_by("created_at", "id")
    )
    for sample in samples:
        if sample.tokens_per_second or sample.samples_per_second:
            latest[sample.run.variant_id] = sample  # type: ignore[index]
    return latest


def _pilot_json(sample: ThroughputSample) -> dict[str, Any]:
    return {
        "run_id": sample.run.run_id,
        "tokens_per_second": sample.tokens_per_second,
        "samples_per_second": sample.samples_per_second,
        "gpus": sample.gpus,
        "measured_seconds": sample.measured_seconds,
        "measured_at": sample.created_at.isoformat(),
    }


def _pilot_hours(item: PlannedItem, sample: ThroughputSample) -> tuple[float | None, str]:
    """Hours for the item's work from its pilot measurement, and what was done, in words.

    1. The config states the work (`tokens`, or `samples` [+ `tokens_per_sample`], x `epochs`):
       hours = work / measured throughput, scaled linearly from the pilot's GPUs to the item's
       (`gpus` in the config, default the pilot's).
    2. Else the config states the throughput the plan assumed (`assumed_tokens_per_second` or
       `assumed_samples_per_second`): planned hours x assumed / measured.
    3. Else the planned hours are kept, and the note says what to add.
    """
    cfg = _config(item)
    planned = float(item.planned_hours)
    pilot_gpus = max(1, int(sample.gpus or 1))
    gpus = _count(cfg.get("gpus")) or pilot_gpus
    epochs = _number(cfg.get("epochs")) or 1.0
    tokens, samples = _number(cfg.get("tokens")), _number(cfg.get("samples"))
    per_sample = _number(cfg.get("tokens_per_sample"))
    tps, sps = _number(sample.tokens_per_second), _number(sample.samples_per_second)
    on = f"{pilot_gpus} GPU{'s' if pilot_gpus != 1 else ''}"

    work: tuple[float, float, str] | None = None
    if tps and tokens:
        work = (tokens * epochs, tps, "tokens")
    elif tps and samples and per_sample:
        work = (samples * per_sample * epochs, tps, "tokens")
    elif sps and samples:
        work = (samples * epochs, sps, "samples")
    if work is not None:
        amount, rate, unit = work
        hours = formulas.pilot_wall_hours(amount, rate, pilot_gpus, gpus)
        return hours, (
            f"the pilot measured {_rate(rate)} {unit}/s on {on}: {fmt_hours(hours)} h for "
            f"{amount:,.0f} {unit} on {gpus} GPU{'s' if gpus != 1 else ''}, instead of the "
            f"{fmt_hours(planned)} h planned"
        )

    assumed: tuple[float, float, str] | None = None
    if tps and _number(cfg.get("assumed_tokens_per_second")):
        assumed = (_number(cfg.get("assumed_tokens_per_second")) or 0.0, tps, "tokens")
    elif sps and _number(cfg.get("assumed_samples_per_second")):
        assumed = (_number(cfg.get("assumed_samples_per_second")) or 0.0, sps, "samples")
    if assumed is not None:
        expected, rate, unit = assumed
        # The assumed figure is for the item's own GPUs; bring the measurement there first.
        measured = rate * gpus / pilot_gpus
        hours = planned * expected / measured
        return hours, (
            f"the pilot measured {_rate(rate)} {unit}/s on {on} against "
            f"{_rate(expected)} assumed: {fmt_hours(planned)} h planned become {fmt_hours(hours)} h"
        )

    measured_text = f"{_rate(tps)} tokens/s" if tps else f"{_rate(sps or 0.0)} samples/s"
    return None, (
        f"the pilot measured {measured_text} on {on}, but the config states neither the work "
        "(tokens, or samples and epochs) nor an assumed throughput: the planned "
        f"{fmt_hours(planned)} h are kept"
    )


def _calculator(
    item: PlannedItem, gpus: dict[str, GpuModel], sample: ThroughputSample | None
) -> tuple[dict[str, Any] | None, str]:
    """The stateless calculator applied to the item's config, when it describes a model.

    Only with `parameters` in the config; it is advisory (memory fit, assumed time) and never
    replaces the planned or pilot hours.
    """
    cfg = _config(item)
    if "parameters" not in cfg or not item.gpu:
        return None, ""
    gpu = gpus.get(normalize_gpu(item.gpu))
    if gpu is None:
        return None, f"the calculator skipped it: GPU {item.gpu!r} is not in the catalog"
    try:
        pilot = None
        if sample is not None:
            pilot = formulas.PilotSpec(
                tokens_per_second=sample.tokens_per_second,
                samples_per_second=None if sample.tokens_per_second else sample.samples_per_second,
                gpus=sample.gpus,
            )
        result = formulas.estimate(
            formulas.EstimateInput(
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
                    gpu=gpu.as_spec(),
                    count=cfg.get("gpus", 1),
                    utilization=cfg.get("utilization", 0.4),
                    zero_stage=cfg.get("zero_stage", 0),
                    tensor_parallel=cfg.get("tensor_parallel", 1),
                    pipeline_parallel=cfg.get("pipeline_parallel", 1),
                ),
                pilot=pilot,
            )
        )
    except (formulas.EstimateInputError, TypeError, ValueError) as exc:
        # Free-form config: a value of the wrong type is the planner's to fix, not a failure.
        return None, f"the calculator could not use its config ({exc})"
    return {
        "time_source": result.time_source,
        "training_flops": result.training_flops,
        "wall_hours": _h(result.wall_hours),
        "gpu_hours": _h(result.gpu_hours),
        "memory_per_device_bytes": result.memory.total,
        "device_memory_bytes": result.device_memory_bytes,
        "fits_in_memory": result.fits_in_memory,
        "first_recommendation": result.recommendations[0] if result.recommendations else "",
    }, ""


# --------------------------------------------------------------------------- calendar


def _schedule(stages: Sequence[calendar.Stage], window: float) -> tuple[float, tuple[str, ...]]:
    plan = calendar.schedule(stages, window)
    return plan.makespan_hours, plan.critical_path


def _baseline_stages(snapshot: dict[str, Any]) -> list[calendar.Stage]:
    rows = snapshot.get("stages") or []
    names = Counter(r["name"] for r in rows)
    keys = {
        r["id"]: r["name"] if names[r["name"]] == 1 else f"{r['name']} #{r['id']}" for r in rows
    }
    return [
        calendar.Stage(
            key=keys[r["id"]],
            name=r["name"],
            kind=r.get("kind", ""),
            machine=bool(r.get("machine", True)),
            resource=r.get("resource") or None,
            planned_hours=float(r["planned_hours"]),
            depends_on=tuple(keys[d] for d in r.get("depends_on", []) if d in keys),
        )
        for r in rows
    ]


# --------------------------------------------------------------------------- lots


def _lot_items(
    stages: Sequence[Stage],
    stage_hours: dict[int, float],
    items: dict[int, PlannedItem],
    memory: dict[int, int],
    reserved_gpu: str | None,
) -> tuple[list[plans.PlanItem], float]:
    """Machine work as lot-selection items: one group per resource (its stages run one after
    another on one lot); an item's stages on a resource become one entry, so a cut names it."""
    by_resource: dict[str, dict[str, list[Stage]]] = defaultdict(lambda: defaultdict(list))
    for s in stages:
        if s.machine and stage_hours[s.pk] > 0:
            key = f"item:{s.variant_id}" if s.variant_id in items else f"stage:{s.pk}"
            by_resource[s.resource or calendar.UNASSIGNED_RESOURCE][key].append(s)
    out: list[plans.PlanItem] = []
    for resource, entries in by_resource.items():
        gpus = Counter(
            items[s.variant_id].gpu
            for group in entries.values()
            for s in group
            if s.variant_id in items and items[s.variant_id].gpu
        )
        group_gpu = gpus.most_common(1)[0][0] if gpus else reserved_gpu
        for key, group in entries.items():
            item = items.get(group[0].variant_id) if key.startswith("item:") else None  # type: ignore[arg-type]
            cfg = _config(item) if item is not None else {}
            out.append(
                plans.PlanItem(
                    key=f"{resource}/{key}",
                    machine_hours=sum(stage_hours[s.pk] for s in group),
                    gpu=(item.gpu if item is not None and item.gpu else None) or group_gpu,
                    gpus_needed=_count(cfg.get("gpus")) or 1,
                    memory_bytes_per_gpu=memory.get(item.pk) if item is not None else None,
                    tier=item.tier if item is not None else "mandatory",  # type: ignore[arg-type]
                    group=resource,
                    name=item.name if item is not None else group[0].name,
                )
            )
    return out, sum(i.machine_hours for i in out)


def _money(amount: Decimal) -> str:
    # Guarded: a quantize needing more than 28 digits raises InvalidOperation.
    if not amount.is_finite() or amount.adjusted() >= 24:
        return str(amount)
    return str(amount.quantize(Decimal("0.01")))


def _lot_advice(
    campaign: Campaign,
    reserved_lots: list[LotReservation],
    work: list[plans.PlanItem],
    reserved_machine_hours: float | None,
    forecast_hours: float,
    window: float,
) -> tuple[dict[str, Any], list[str]]:
    currency = campaign.currency
    reserved = [
        {
            "plan": f"{lot.plan.provider} {lot.plan.name}",
            "quantity": lot.quantity,
            "price": _money(lot.plan.price),
            "currency": lot.plan.currency,
            "total": _money(lot.total_price),
        }
        for lot in reserved_lots
    ]
    reserved_total = sum(
        (lot.total_price for lot in reserved_lots if lot.plan.currency == currency), Decimal(0)
    )
    result: dict[str, Any] = {
        "currency": currency,
        "reserved": reserved,
        "reserved_total": _money(reserved_total) if reserved_lots else None,
        "advised": [],
        "advised_total": None,
        "feasible": None,
        "method": None,
        "explanation": [],
    }
    if not work:
        return result, []
    # Lots are compared in the campaign's currency only: no exchange rate is ever invented.
    offers = [
        plan_offer(p)
        for p in RentalPlan.objects.select_related("gpu").filter(currency=currency).order_by("id")
    ]
    if not offers:
        return result, [f"No rental plan is listed in {currency}: no lot advice."]
    if not math.isfinite(window) or window <= 0:
        return result, [
            f"The window is {fmt_hours(window)} h: give the campaign one for lot advice."
        ]
    advice: list[str] = []
    fits = forecast_hours <= window + 1e-9
    lot_window = window
    if not fits:
        # The work no longer fits the window: look at what a longer lot would take (docs/domain.md
        # §7: "then look at the 7-day plan, or at a reduced protocol").
        lot_window = max(window, max(o.duration_hours for o in offers))
    reference = reserved_machine_hours
    if reference is not None and abs(reference - sum(i.machine_hours for i in work)) < 1e-9:
        reference = None  # "the calendar stays the same" says nothing
    selection = plans.select_lots(work, lot_window, offers, reference_hours=reference)
    labels = {i.key: i.label for i in work}
    lines = list(selection.explanation)
    if not fits:
        lines.insert(
            0 if reference is None else 1,
            f"The forecast ({fmt_hours(forecast_hours)} h) exceeds the {fmt_hours(window)} h "
            "window: the lots below assume the window can stretch to a longer lot; otherwise "
            "cut work (a reduced protocol that still answers the question).",
        )
    advice.extend(lines)
    advised_total = selection.total
    result.update(
        advised=[
            {
                "plan": f"{lot.plan.provider} {lot.plan.name}",
                "gpu": lot.plan.gpu,
                "duration_hours": _h(lot.plan.duration_hours),
                "price": _money(lot.plan.price),
                "currency": lot.plan.currency,
                "hours": _h(lot.hours),
                "items": [labels[k] for k in lot.item_keys],
            }
            for lot in selection.lots
        ],
        advised_total=_money(advised_total),
        feasible=selection.feasible,
        method=selection.method,
        explanation=lines,
        cut_options=[
            {
                "items": [labels[k] for k in cut.item_keys],
                "hours_cut": _h(cut.hours_cut),
                "plan": f"{cut.plan.provider} {cut.plan.name}",
                "price": _money(cut.plan.price),
            }
            for cut in selection.cut_options
        ],
    )
    if reserved_lots and selection.lots:
        if advised_total > reserved_total:
            advice.append(
                f"The reserved lots cost {_money(reserved_total)} {currency}; the forecast needs "
                f"{_money(advised_total)} {currency} of lots, "
                f"{_money(advised_total - reserved_total)} {currency} more."
            )
        else:
            advice.append(
                f"The reserved lots ({_money(reserved_total)} {currency}) cover the forecast."
            )
    if campaign.budget is not None and selection.lots and advised_total > campaign.budget:
        advice.append(
            f"The advised lots ({_money(advised_total)} {currency}) exceed the budget of "
            f"{_money(campaign.budget)} {currency}."
        )
    return result, advice


# --------------------------------------------------------------------------- the forecast


def compute_forecast(campaign: Campaign) -> Forecast:
    """Reserved, forecast and observed hours per item and in total, the window and lot advice.

    Reads the database; writes nothing. Reserved hours come from the frozen baseline once the
    plan is committed (the plan is never rewritten), else from the plan as it stands.
    """
    window = float(campaign.window_hours)
    items = list(campaign.items.order_by("id"))
    by_id = {i.pk: i for i in items}
    stages = list(campaign.stages.prefetch_related("depends_on").order_by("id"))
    runs = list(
        # campaign_id too: the related manager reads it on every row it attaches.
        campaign.runs.only(
            "id", "campaign_id", "variant_id", "kind", "status", "observed_hours"
        ).order_by("id")
    )
    pilots = _latest_pilots(campaign)
    baseline: PlanBaseline | None = None
    if campaign.status != CampaignStatus.DRAFT:
        baseline = PlanBaseline.objects.filter(campaign=campaign).first()
    snapshot = baseline.snapshot if baseline is not None else None
    gpu_rows = {normalize_gpu(g.name): g for g in GpuModel.objects.all()}
    reserved_lots = list(campaign.lots.select_related("plan__gpu").order_by("id"))
    advice: list[str] = []
    # The team's other campaigns: what their training stages took against their estimates.
    calibrations = team_calibrations(campaign.team_id, exclude_campaign_id=campaign.pk)
    known_gpus = [g.name for g in gpu_rows.values()]
    calibrated: list[dict[str, Any]] = []

    # Observed hours: an item's come from its runs, else from its stages, never both.
    run_observed: dict[int, float] = defaultdict(float)
    full_run_observed: dict[int, float] = defaultdict(float)
    loose_run_observed = 0.0
    for run in runs:
        if run.observed_hours is None:
            continue
        hours = float(run.observed_hours)
        if run.variant_id is None:
            loose_run_observed += hours
            continue
        run_observed[run.variant_id] += hours
        if run.kind != RunKind.PILOT and run.status in _FINISHED_RUNS:
            full_run_observed[run.variant_id] += hours
    stage_observed: dict[int, float] = defaultdict(float)
    for s in stages:
        if s.observed_hours is not None and s.variant_id is not None:
            stage_observed[s.variant_id] += float(s.observed_hours)

    reserved_items: dict[int, float] = {}
    if snapshot is not None:
        for row in snapshot.get("items") or []:
            reserved_items[int(row["id"])] = float(row["planned_hours"])

    forecasts: list[ItemForecast] = []
    factor: dict[int, float] = {}
    memory: dict[int, int] = {}
    for item in items:
        planned = float(item.planned_hours)
        sample = pilots.get(item.pk)
        observed = run_observed.get(item.pk)
        if observed is None:
            observed = stage_observed.get(item.pk)
        calc, calc_note = _calculator(item, gpu_rows, sample)
        if calc is not None and calc["memory_per_device_bytes"]:
            memory[item.pk] = int(calc["memory_per_device_bytes"])
        pilot_json = _pilot_json(sample) if sample is not None else None
        if item.status == ItemStatus.CUT:
            hours, source, note = 0.0, ASSUMED, "cut by a decision: no hours forecast"
        elif item.pk in full_run_observed:
            # The training itself happened: what it took replaces any assumption or pilot.
            hours, source = full_run_observed[item.pk], OBSERVED
            note = f"its run is finished: {fmt_hours(hours)} h observed"
        elif item.status == ItemStatus.DONE and observed is not None:
            hours, source, note = observed, OBSERVED, f"done: {fmt_hours(observed)} h observed"
        elif sample is not None:
            measured, note = _pilot_hours(item, sample)
            hours, source = (measured, PILOT) if measured is not None else (planned, ASSUMED)
        else:
            hours, source = planned, ASSUMED
            note = f"no pilot yet: the planned {fmt_hours(planned)} h are assumed"
            found = calibration.applicable(
                calibrations, "training", calibration.gpu_in(item.gpu, known_gpus)
            )
            if found is not None and planned > 0:
                hours, source = planned * found.median, CALIBRATED
                note = (
                    f"no pilot yet: the planned {fmt_hours(planned)} h × {found.median:.2f}, the "
                    f"median observed/estimated of {found.count} training stages in "
                    f"{found.source_names()}"
                )
                calibrated.append(
                    {
                        "item": item.name,
                        "raw_hours": _h(planned),
                        "calibrated_hours": _h(hours),
                        "median_ratio": round(found.median, 4),
                        "count": found.count,
                        "source_campaigns": [
                            {"id": pk, "title": title} for pk, title in found.sources
                        ],
                    }
                )
        if calc_note:
            note = f"{note}; {calc_note}"
        if calc is not None and not calc["fits_in_memory"]:
            advice.append(f"{item.name}: {calc['first_recommendation']}")
        elif calc is not None and source == ASSUMED and calc["wall_hours"] > planned * 1.1:
            advice.append(
                f"{item.name}: the calculator expects {fmt_hours(calc['wall_hours'])} h at the "
                f"assumed utilization, more than the {fmt_hours(planned)} h planned."
            )
        reserved = reserved_items.get(item.pk) if snapshot is not None else planned
        # The item's stages were planned for the reserved hours (frozen at commit; an
        # amendment changes the item, not its stages): scale them from that basis.
        basis = reserved if reserved is not None else planned
        if basis > 0 and abs(hours - basis) > 1e-9:
            factor[item.pk] = hours / basis
        if source == PILOT or (sample is not None and source == ASSUMED):
            advice.append(f"{item.name}: {note}.")
        forecasts.append(
            ItemForecast(
                id=item.pk,
                name=item.name,
                tier=item.tier,
                role=item.role,
                status=item.status,
                gpu=item.gpu,
                planned_hours=planned,
                # None: added after commit, so not in the baseline.
                reserved_hours=reserved,
                forecast_hours=hours,
                observed_hours=observed,
                time_source=source,
                note=note,
                pilot=pilot_json,
                calculator=calc,
                config=_config(item),
            )
        )
    added = [f.name for f in forecasts if f.reserved_hours is None]
    if added:
        advice.append(
            f"Added after commit, not in the frozen baseline: {', '.join(added)} "
            "(reserved 0 h for them)."
        )

    # Forecast stage hours: observed where it happened, cut items drop out, the rest scales.
    scaled: set[int] = set()
    linked: dict[int, list[Stage]] = defaultdict(list)
    for s in stages:
        if s.variant_id is not None and s.machine:
            linked[s.variant_id].append(s)
    for group in linked.values():
        training = [s for s in group if s.kind in _SCALED_KINDS]
        scaled.update(s.pk for s in (training or group))
    stage_hours: dict[int, float] = {}
    for s in stages:
        linked_item = by_id.get(s.variant_id) if s.variant_id is not None else None
        if s.observed_hours is not None:
            stage_hours[s.pk] = float(s.observed_hours)
        elif linked_item is not None and linked_item.status == ItemStatus.CUT:
            stage_hours[s.pk] = 0.0
        elif linked_item is not None and s.pk in scaled and linked_item.pk in factor:
            stage_hours[s.pk] = float(s.planned_hours) * factor[linked_item.pk]
        else:
            stage_hours[s.pk] = float(s.planned_hours)

    critical: tuple[str, ...] = ()
    reserved_machine: float | None = None
    if stages:
        keys = stage_keys(stages)
        forecast_stages = [
            calendar.Stage(
                key=keys[s.pk],
                name=s.name,
                kind=s.kind,
                machine=s.machine,
                resource=s.resource or None,
                planned_hours=stage_hours[s.pk],
                depends_on=tuple(keys[d.pk] for d in s.depends_on.all()),
            )
            for s in stages
        ]
        reserved_stages = (
            _baseline_stages(snapshot)
            if snapshot is not None
            else [
                calendar.Stage(
                    key=st.key,
                    name=st.name,
                    kind=st.kind,
                    machine=st.machine,
                    resource=st.resource,
                    planned_hours=float(s.planned_hours),
                    depends_on=st.depends_on,
                )
                for st, s in zip(forecast_stages, stages, strict=True)
            ]
        )
        try:
            forecast_total, critical = _schedule(forecast_stages, window)
            reserved_total, _ = _schedule(reserved_stages, window)
        except ValueError as exc:
            # A cycle is the planner's to fix; meanwhile count every stage one after another.
            advice.append(f"The calendar cannot be scheduled ({exc}): stages counted in sequence.")
            forecast_total = sum(st.planned_hours for st in forecast_stages)
            reserved_total = sum(st.planned_hours for st in reserved_stages)
        reserved_machine = sum(st.planned_hours for st in reserved_stages if st.machine)
        advice.extend(
            load.message
            for load in calendar.resource_loads(forecast_stages, window)
            if load.exceeds_window
        )
        staged = {s.variant_id for s in stages if s.variant_id is not None}
        loose = [
            i.name
            for i in items
            if i.pk not in staged and i.status != ItemStatus.CUT and i.planned_hours > 0
        ]
        if loose:
            advice.append(
                f"No calendar stage for {', '.join(loose)}: their hours are not in the calendar; "
                "add a stage for each."
            )
        observed_total = sum(float(s.observed_hours or 0) for s in stages) + sum(
            hours for item_id, hours in run_observed.items() if item_id not in stage_observed
        )
        if not any(s.observed_hours is not None for s in stages):
            observed_total += loose_run_observed
    else:
        # Without a calendar, items run one after another (as the plan summary counts them).
        forecast_total = sum(f.forecast_hours + float(by_id[f.id].prep_hours) for f in forecasts)
        if snapshot is not None:
            reserved_total = sum(
                float(r["planned_hours"]) + float(r.get("prep_hours") or 0)
                for r in snapshot.get("items") or []
                if r.get("status") != ItemStatus.CUT
            )
        else:
            reserved_total = sum(
                float(i.planned_hours + i.prep_hours) for i in items if i.status != ItemStatus.CUT
            )
        observed_total = sum(run_observed.values()) + loose_run_observed

    if stages:
        reserved_gpus = {lot.plan.gpu.name for lot in reserved_lots}
        work, _ = _lot_items(
            stages,
            stage_hours,
            by_id,
            memory,
            next(iter(reserved_gpus)) if len(reserved_gpus) == 1 else None,
        )
    else:
        # One group per GPU model: without stages the items run one after another.
        work = [
            plans.PlanItem(
                key=f"item:{f.id}",
                machine_hours=f.forecast_hours,
                gpu=f.gpu or None,
                gpus_needed=_count(_config(by_id[f.id]).get("gpus")) or 1,
                memory_bytes_per_gpu=memory.get(f.id),
                tier=f.tier,  # type: ignore[arg-type]
                group=f"gpu:{f.gpu or 'any'}",
                name=f.name,
            )
            for f in forecasts
            if f.status != ItemStatus.CUT and f.forecast_hours > 0
        ]
        reserved_machine = None
    lots, lot_lines = _lot_advice(
        campaign, reserved_lots, work, reserved_machine, forecast_total, window
    )

    if forecast_total <= window + 1e-9:
        headline = (
            f"Forecast {fmt_hours(forecast_total)} h end to end in a {fmt_hours(window)} h window: "
            f"fits, {fmt_hours(window - forecast_total)} h to spare "
            f"(reserved {fmt_hours(reserved_total)} h)."
        )
    else:
        headline = (
            f"Forecast {fmt_hours(forecast_total)} h end to end in a {fmt_hours(window)} h window: "
            f"{fmt_hours(forecast_total - window)} h over "
            f"(reserved {fmt_hours(reserved_total)} h); look at a longer lot, "
            "or a reduced protocol that still answers the question."
        )
    if not pilots and any(f.status != ItemStatus.CUT for f in forecasts):
        advice.append(
            "No pilot throughput yet: every forecast is the planned figure; log a pilot "
            "(POST /runs/{run_id}/throughput/) to replace it with a measurement."
        )

    live = [f for f in forecasts if f.status != ItemStatus.CUT]
    source = PILOT if any(f.time_source == PILOT for f in live) else ASSUMED
    if source == ASSUMED and any(f.time_source == CALIBRATED for f in live):
        source = CALIBRATED
    return Forecast(
        window_hours=window,
        committed=snapshot is not None,
        reserved_hours=reserved_total,
        forecast_hours=forecast_total,
        observed_hours=observed_total,
        items=tuple(forecasts),
        time_source=source,
        advice=(headline, *advice, *lot_lines),
        lots=lots,
        critical_path=critical,
        calibration=tuple(calibrated),
        inputs={
            "window_hours": _h(window),
            "committed": snapshot is not None,
            "baseline_digest": baseline.digest if baseline is not None else None,
            "items": len(items),
            "stages": len(stages),
            "pilot_samples": {str(k): v.pk for k, v in pilots.items()},
            "currency": campaign.currency,
            "budget": None if campaign.budget is None else str(campaign.budget),
        },
    )


# --------------------------------------------------------------------------- persistence


def _campaign_row(campaign_id: int) -> QuerySet[Estimate]:
    return Estimate.objects.filter(campaign_id=campaign_id, item__isnull=True)


def _bump(campaign_id: int, *, create: bool) -> int | None:
    """New input version for the campaign's estimates, all marked stale; None if no row and
    `create` is off. Runs inside the caller's transaction and locks the campaign row."""
    row = _campaign_row(campaign_id).select_for_update().first()
    if row is None:
        if not create:
            return None
        Estimate.objects.get_or_create(campaign_id=campaign_id, item=None)
        row = _campaign_row(campaign_id).select_for_update().get()
    version = int(row.input_version) + 1
    # Keep the first moment it went stale: the sweep measures how long it has been waiting.
    Estimate.objects.filter(campaign_id=campaign_id).update(
        input_version=version,
        status=EstimateStatus.STALE,
        stale_since=Coalesce("stale_since", Value(timezone.now())),
    )
    return version


@transaction.atomic
def land_forecast(campaign_id: int, version: int, forecast: Forecast) -> bool:
    """Write the campaign's and every item's estimate, only if `version` is still current and
    has not landed yet. One transaction: readers never see half a forecast."""
    row = _campaign_row(campaign_id).select_for_update().first()
    if row is None or row.input_version != version:
        return False
    if row.computed_version is not None and row.computed_version >= version:
        return False
    now = timezone.now()
    previous = row.outputs if isinstance(row.outputs, dict) else {}
    row.outputs = {**forecast.as_json(), "landings": int(previous.get("landings", 0)) + 1}
    row.inputs = forecast.inputs
    row.time_source = forecast.time_source
    row.status = EstimateStatus.FRESH
    row.stale_since = None
    row.computed_version = version
    row.computed_at = now
    row.error = ""
    row.save(
        update_fields=[
            "outputs",
            "inputs",
            "time_source",
            "status",
            "stale_since",
            "computed_version",
            "computed_at",
            "error",
        ]
    )
    # Only time_source, inputs and outputs differ per item, and most items keep theirs from one
    # version to the next (a pilot moves one item): rewrite those rows only, and stamp the
    # version on all of them with a single UPDATE.
    items = Estimate.objects.filter(campaign_id=campaign_id, item__isnull=False)
    existing = {
        e.item_id: e for e in items.only("id", "item_id", "time_source", "inputs", "outputs")
    }
    changed, created = [], []
    for item in forecast.items:
        inputs = {
            "planned_hours": _h(item.planned_hours),
            "gpu": item.gpu,
            "config": item.config,
            "pilot": item.pilot,
        }
        outputs = item.as_json()
        estimate = existing.get(item.id)
        if estimate is None:
            created.append(
                Estimate(
                    campaign_id=campaign_id,
                    item_id=item.id,
                    input_version=version,
                    computed_version=version,
                    status=EstimateStatus.FRESH,
                    time_source=item.time_source,
                    inputs=inputs,
                    outputs=outputs,
                    computed_at=now,
                )
            )
        elif (estimate.time_source, estimate.inputs, estimate.outputs) != (
            item.time_source,
            inputs,
            outputs,
        ):
            estimate.time_source, estimate.inputs, estimate.outputs = (
                item.time_source,
                inputs,
                outputs,
            )
            changed.append(estimate)
    Estimate.objects.bulk_update(changed, ["time_source", "inputs", "outputs"], batch_size=200)
    items.update(
        input_version=version,
        computed_version=version,
        status=EstimateStatus.FRESH,
        stale_since=None,
        computed_at=now,
        error="",
    )
    Estimate.objects.bulk_create(created, batch_size=500)
    return True


@transaction.atomic
def land_failure(campaign_id: int, version: int, error: str) -> bool:
    """The plan cannot be forecast as it stands: say why; the last good outputs stay."""
    row = _campaign_row(campaign_id).select_for_update().first()
    if row is None or row.input_version != version:
        return False
    if row.computed_version is not None and row.computed_version >= version:
        return False
    Estimate.objects.filter(campaign_id=campaign_id).update(
        status=EstimateStatus.FAILED,
        stale_since=None,
        computed_version=version,
        computed_at=timezone.now(),
        error=error[:2000],
    )
    return True


def recompute(campaign_id: int, version: int) -> str:
    """Compute and land version `version` of the campaign's forecast; what happened, in a word.

    Idempotent: a superseded version or one that already landed does nothing.
    """
    state = _campaign_row(campaign_id).values_list("input_version", "computed_version").first()
    if state is None:
        return "missing"
    current, computed = state
    if current != version:
        return "superseded"
    if computed is not None and computed >= version:
        return "duplicate"
    campaign = Campaign.objects.filter(pk=campaign_id).first()
    if campaign is None:
        return "missing"
    try:
        forecast = compute_forecast(campaign)
    except (ValueError, ArithmeticError) as exc:
        # The pure modules refuse this plan; retrying will not help until the plan changes.
        log.warning("forecast of campaign %s (v%s) failed: %s", campaign_id, version, exc)
        return "failed" if land_failure(campaign_id, version, str(exc)) else "superseded"
    return "landed" if land_forecast(campaign_id, version, forecast) else "superseded"


def stale_estimates(older_than_seconds: float, limit: int = 1000) -> list[tuple[int, int]]:
    """(campaign id, version) of campaign forecasts stale for longer than the given time."""
    cutoff = timezone.now() - timedelta(seconds=older_than_seconds)
    rows = (
        Estimate.objects.filter(
            item__isnull=True, status=EstimateStatus.STALE, stale_since__lt=cutoff
        )
        .order_by("stale_since")
        .values_list("campaign_id", "input_version")[:limit]
    )
    return [(int(c), int(v)) for c, v in rows]


def current_estimate(campaign: Campaign) -> Estimate:
    """The persisted campaign forecast; computed here, synchronously, if none ever landed."""
    row = _campaign_row(campaign.pk).first()
    if row is None or row.computed_version is None:
        version = row.input_version if row is not None else 0
        if not version:
            # No version yet: make one without enqueueing, since it is computed right here.
            with transaction.atomic():
                version = _bump(campaign.pk, create=True) or 0
        recompute(campaign.pk, version)
        row = _campaign_row(campaign.pk).get()
    return row


# --------------------------------------------------------------------------- admin panel


def panel_context(estimate: Estimate) -> dict[str, Any]:
    outputs = estimate.outputs if isinstance(estimate.outputs, dict) else {}
    return {
        "estimate": estimate,
        "forecast": outputs,
        "items": outputs.get("items", []),
        "totals": outputs.get("totals", {}),
        "advice": outputs.get("advice", []),
        "lots": outputs.get("lots", {}),
        "calibration": outputs.get("calibration", []),
    }


def forecast_panel_html(campaign: Campaign) -> SafeString:
    """The forecast panel of the campaign's admin page (templates/estimates/forecast_panel.html).

    Serves the persisted forecast, computing it once if none exists yet.
    """
    estimate = current_estimate(campaign)
    return render_to_string("estimates/forecast_panel.html", panel_context(estimate))
