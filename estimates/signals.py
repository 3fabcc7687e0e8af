"""What makes a forecast stale: plan changes and pilot measurements (docs/domain.md §10: "once a
pilot is logged, its measurement replaces the assumed utilization ... and the forecast is
recomputed"). Connected from `EstimatesConfig.ready()`.

Signals keep the campaigns app (and the endpoints other people build on it) unaware of
estimates. Bulk `QuerySet.update()` / `bulk_create()` send no signals: code that changes plan
rows that way must call `estimates.services.mark_stale()` itself. Fixture loading (`raw`) is
ignored. Deletions never create an estimate row: the campaign itself may be going away.
"""

from __future__ import annotations

from typing import Any

from django.db.models.signals import m2m_changed, post_delete, post_init, post_save

from campaigns.models import (
    Campaign,
    DecisionPoint,
    LotReservation,
    PlanBaseline,
    PlannedItem,
    Run,
    RunKind,
    Stage,
    ThroughputSample,
)
from campaigns.signals import observed_hours_recorded
from estimates.services import mark_stale

# Fields whose change moves a forecast; other saves (a title, a run's last step) do not.
CAMPAIGN_FIELDS = ("window_hours", "budget", "currency", "status")
RUN_FIELDS = ("observed_hours", "status", "variant_id", "kind")
_UNKNOWN = object()


def _state(instance: Any, fields: tuple[str, ...]) -> tuple[Any, ...]:
    # __dict__, not getattr: reading a deferred field here would cost a query per instance.
    return tuple(instance.__dict__.get(f, _UNKNOWN) for f in fields)


def _remember_campaign(sender: Any, instance: Campaign, **kwargs: Any) -> None:
    instance._estimate_state = _state(instance, CAMPAIGN_FIELDS)  # type: ignore[attr-defined]


def _remember_run(sender: Any, instance: Run, **kwargs: Any) -> None:
    instance._estimate_state = _state(instance, RUN_FIELDS)  # type: ignore[attr-defined]


def campaign_saved(
    sender: Any, instance: Campaign, created: bool, raw: bool, **kwargs: Any
) -> None:
    if raw:
        return
    state = _state(instance, CAMPAIGN_FIELDS)
    if created or state != getattr(instance, "_estimate_state", None):
        mark_stale(instance.pk)
    instance._estimate_state = state  # type: ignore[attr-defined]


def run_saved(sender: Any, instance: Run, created: bool, raw: bool, **kwargs: Any) -> None:
    if raw:
        return
    state = _state(instance, RUN_FIELDS)
    # A new run without observed hours changes nothing until it measures or finishes.
    changed = (
        instance.observed_hours is not None
        if created
        else (state != getattr(instance, "_estimate_state", None))
    )
    instance._estimate_state = state  # type: ignore[attr-defined]
    if changed:
        mark_stale(instance.campaign_id)


def run_deleted(sender: Any, instance: Run, **kwargs: Any) -> None:
    mark_stale(instance.campaign_id, create=False)


def plan_row_saved(sender: Any, instance: Any, raw: bool = False, **kwargs: Any) -> None:
    if not raw:
        mark_stale(instance.campaign_id)


def plan_row_deleted(sender: Any, instance: Any, **kwargs: Any) -> None:
    mark_stale(instance.campaign_id, create=False)


def links_changed(sender: Any, instance: Any, action: str, **kwargs: Any) -> None:
    """Stage dependencies and the items a decision cuts (many-to-many)."""
    if action in ("post_add", "post_remove", "post_clear"):
        mark_stale(instance.campaign_id)


def _pilot_campaign(sample: ThroughputSample) -> int | None:
    if ThroughputSample.run.is_cached(sample):
        run = sample.run
        return run.campaign_id if run.kind == RunKind.PILOT else None
    row = Run.objects.filter(pk=sample.run_id).values_list("campaign_id", "kind").first()
    return row[0] if row is not None and row[1] == RunKind.PILOT else None


def throughput_saved(
    sender: Any, instance: ThroughputSample, created: bool, raw: bool, **kwargs: Any
) -> None:
    """A pilot measurement replaces the assumed figure: recompute. Full runs' samples do not."""
    if raw:
        return
    campaign_id = _pilot_campaign(instance)
    if campaign_id is not None:
        mark_stale(campaign_id)


def throughput_deleted(sender: Any, instance: ThroughputSample, **kwargs: Any) -> None:
    campaign_id = _pilot_campaign(instance)
    if campaign_id is not None:
        mark_stale(campaign_id, create=False)


def observed_recorded(sender: Any, stage: Stage, **kwargs: Any) -> None:
    mark_stale(stage.campaign_id)


def connect() -> None:
    """Idempotent (dispatch_uid): ready() may run more than once in tests."""
    uid = "estimates.signals."
    post_init.connect(_remember_campaign, sender=Campaign, dispatch_uid=uid + "campaign_init")
    post_save.connect(campaign_saved, sender=Campaign, dispatch_uid=uid + "campaign")
    post_init.connect(_remember_run, sender=Run, dispatch_uid=uid + "run_init")
    post_save.connect(run_saved, sender=Run, dispatch_uid=uid + "run")
    post_delete.connect(run_deleted, sender=Run, dispatch_uid=uid + "run_deleted")
    for model in (PlannedItem, Stage, LotReservation, PlanBaseline):
        name = model.__name__.lower()
        post_save.connect(plan_row_saved, sender=model, dispatch_uid=uid + name)
        post_delete.connect(plan_row_deleted, sender=model, dispatch_uid=uid + name + "_deleted")
    m2m_changed.connect(
        links_changed, sender=Stage.depends_on.through, dispatch_uid=uid + "depends_on"
    )
    m2m_changed.connect(
        links_changed, sender=DecisionPoint.cut_variants.through, dispatch_uid=uid + "cut"
    )
    observed_hours_recorded.connect(observed_recorded, dispatch_uid=uid + "observed")
    post_save.connect(throughput_saved, sender=ThroughputSample, dispatch_uid=uid + "throughput")
    post_delete.connect(
        throughput_deleted, sender=ThroughputSample, dispatch_uid=uid + "throughput_deleted"
    )
