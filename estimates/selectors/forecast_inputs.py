"""Reads what a campaign's forecast is computed from into the pure `ForecastInputs`
(docs/domain.md §10): items with their work fields, stages, runs, the latest pilot of each item,
the frozen baseline once committed, reserved lots, the rental plans in the campaign's currency,
the GPU catalogue and the team's calibration (§20). Writes nothing."""

from __future__ import annotations

from typing import Any

from campaigns.models import (
    WORK_FIELDS,
    Campaign,
    CampaignStatus,
    LotReservation,
    PlanBaseline,
    PlannedItem,
    RunKind,
    ThroughputSample,
)
from campaigns.selectors.timeline import timeline_inputs
from catalog.domain.gpu_names import normalize_gpu
from catalog.models import GpuModel, RentalPlan
from estimates.domain import forecast
from estimates.domain.forecast_inputs import (
    Forecast,
    ForecastInputs,
    ItemInput,
    LotInput,
    PilotInput,
)
from estimates.models import plan_offer
from estimates.selectors.calibration import team_calibrations


def item_config(item: PlannedItem) -> dict[str, Any]:
    """The item's config with its work fields (tokens, samples, epochs, assumed throughput,
    GPUs) over any config key of the same name: the fields are the inputs, the keys are only
    read for items that still carry them (docs/domain.md §10)."""
    cfg = dict(item.config) if isinstance(item.config, dict) else {}
    for name in WORK_FIELDS:
        value = getattr(item, name, None)
        if value is not None:
            cfg[name] = value
    return cfg


def item_input(item: PlannedItem) -> ItemInput:
    return ItemInput(
        id=item.pk,
        name=item.name,
        tier=item.tier,
        role=item.role,
        status=item.status,
        gpu=item.gpu,
        planned_hours=item.planned_hours,
        prep_hours=item.prep_hours,
        config=item_config(item),
        estimate_spec=item.estimate_spec if isinstance(item.estimate_spec, dict) else None,
        calibrated_from=calibrated_from(item.calibrated_from),
    )


def calibrated_from(value: Any) -> dict[str, Any] | None:
    """A clone's lesson on a figure (docs/domain.md §21), when it applied a ratio; None when
    the figure was kept as planned before (the forecast may calibrate it)."""
    if isinstance(value, dict) and value.get("ratio") is not None:
        return value
    return None


def pilot_input(sample: ThroughputSample) -> PilotInput:
    return PilotInput(
        sample_id=sample.pk,
        run_id=sample.run.run_id if sample.run_id else "",
        tokens_per_second=sample.tokens_per_second,
        samples_per_second=sample.samples_per_second,
        gpus=sample.gpus,
        measured_seconds=sample.measured_seconds,
        measured_at=sample.created_at.isoformat() if sample.created_at else None,
    )


def latest_pilots(campaign: Campaign) -> dict[int, PilotInput]:
    """The most recent pilot measurement of each item (a newer pilot supersedes older ones)."""
    latest: dict[int, PilotInput] = {}
    samples = (
        ThroughputSample.objects.filter(
            run__campaign=campaign, run__kind=RunKind.PILOT, run__variant__isnull=False
        )
        .select_related("run")
        .order_by("created_at", "id")
    )
    for sample in samples:
        if sample.tokens_per_second or sample.samples_per_second:
            latest[sample.run.variant_id] = pilot_input(sample)  # type: ignore[index]
    return latest


def _lot(lot: LotReservation) -> LotInput:
    return LotInput(
        provider=lot.plan.provider,
        plan_name=lot.plan.name,
        gpu=lot.plan.gpu.name,
        quantity=lot.quantity,
        price=lot.plan.price,
        currency=lot.plan.currency,
    )


def forecast_inputs(campaign: Campaign) -> ForecastInputs:
    """Everything `estimates.domain.forecast.compute` needs, read in a fixed number of queries."""
    digest = None
    if campaign.status != CampaignStatus.DRAFT:
        row = PlanBaseline.objects.filter(campaign=campaign).first()
        digest = row.digest if row is not None and row.snapshot is not None else None
    gpus = {normalize_gpu(g.name): g for g in GpuModel.objects.all()}
    specs = {}
    for key, gpu in gpus.items():
        try:
            specs[key] = gpu.as_spec()
        except (TypeError, ValueError):
            # A row the formulas refuse: the calculator then says its GPU is not usable.
            continue
    offers = RentalPlan.objects.select_related("gpu").filter(currency=campaign.currency)
    return ForecastInputs(
        campaign_id=campaign.pk,
        currency=campaign.currency,
        budget=campaign.budget,
        items=tuple(item_input(i) for i in campaign.items.order_by("id")),
        timeline=timeline_inputs(campaign),
        pilots=latest_pilots(campaign),
        baseline_digest=digest,
        lots=tuple(_lot(lot) for lot in campaign.lots.select_related("plan__gpu").order_by("id")),
        offers=tuple(plan_offer(p) for p in offers.order_by("id")),
        gpus=specs,
        known_gpus=tuple(g.name for g in gpus.values()),
        # The team's other campaigns: what their training stages took against their estimates.
        calibrations=tuple(team_calibrations(campaign.team_id, exclude_campaign_id=campaign.pk)),
        calibrated_stages=frozenset(
            pk
            for pk, lesson in campaign.stages.filter(calibrated_from__isnull=False).values_list(
                "id", "calibrated_from"
            )
            if calibrated_from(lesson) is not None
        ),
    )


def compute_forecast(campaign: Campaign) -> Forecast:
    """Reserved, forecast and observed hours per item and in total, the window and lot advice.

    Reads the database; writes nothing. Reserved hours come from the frozen baseline once the
    plan is committed (the plan is never rewritten), else from the plan as it stands.
    """
    return forecast.compute(forecast_inputs(campaign))
