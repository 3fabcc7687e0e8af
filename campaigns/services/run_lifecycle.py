"""A run's name, resumption and soft deletion (the MLflow facade's runs/update, runs/delete,
runs/restore; docs/mlflow.md, docs/domain.md §4).

* The display name (`run_name`) is any text and can change; the run id never does.
* A run that ended (completed, or failed: MLflow's FINISHED, FAILED or KILLED) can be set running
  again while its campaign takes runs, as MLflow's server allows: the stretch that ended is kept
  as a RunSegment with its own hours, and the run's hours become the sum of its segments (so
  each hour is costed once). A run a rule (or a person) stopped stays stopped: the stop rules
  still hold for a resumed run.
* Deleting hides a run from searches and refuses logging until it is restored; nothing is
  removed (its hours and cost are spent).
"""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal

from django.db import transaction
from django.utils import timezone

from campaigns.domain import run_cost
from campaigns.models import Run, RunSegment, RunStatus
from campaigns.services import ingest
from campaigns.services.run_log import lock_run

HOURS_MAX = Decimal("9999999.99")


def _relock(run: Run) -> Run:
    return lock_run(Run.objects.filter(pk=run.pk), run.run_id)


def segment_start(run: Run) -> datetime:
    """Where the run's current stretch began: its creation, or its last resumption."""
    return run.segment_started_at or run.created_at


def hours_until(run: Run, end: datetime) -> Decimal:
    """The run's hours if it ended at `end`: its earlier segments plus this stretch's wall
    hours, to the hundredth (the observed hours a finish records)."""
    stretch = run_cost.run_hours(
        observed_hours=None, started=segment_start(run), ended=end, now=end
    )
    return min((run.prior_hours + stretch).quantize(Decimal("0.01")), HOURS_MAX)


@transaction.atomic
def rename_run(run: Run, *, name: str) -> Run:
    run = _relock(run)
    if run.run_name != name:
        run.run_name = name
        run.tags = {**run.tags, "mlflow.runName": name}
        run.save(update_fields=["run_name", "tags"])
    return run


@transaction.atomic
def resume_run(run: Run) -> Run:
    """Set a finished run running again (a running run is left as it is); RunRefused for a
    stopped run (its stop holds) or a closed campaign (docs/domain.md §5.8)."""
    run = _relock(run)
    if run.status == RunStatus.RUNNING:
        return run
    if run.status not in ingest.FINISHED:
        ingest.refuse_unless_running(run)  # a stopped run: raises with the rule's reason
    now = timezone.now()
    ended = run.finished_at or now
    total = run.observed_hours if run.observed_hours is not None else hours_until(run, ended)
    hours = max(total - run.prior_hours, Decimal(0))
    RunSegment.objects.create(
        run=run,
        number=run.segments.count() + 1,
        started_at=segment_start(run),
        ended_at=ended,
        status=run.status,
        hours=hours,
        last_step=run.last_step,
    )
    run.prior_hours = min(run.prior_hours + hours, HOURS_MAX)
    run.status = RunStatus.RUNNING
    run.finished_at = None
    run.observed_hours = None
    run.segment_started_at = now
    run.save(
        update_fields=[
            "prior_hours",
            "status",
            "finished_at",
            "observed_hours",
            "segment_started_at",
        ]
    )
    return run


@transaction.atomic
def delete_run(run: Run) -> Run:
    run = _relock(run)
    if run.deleted_at is None:
        run.deleted_at = timezone.now()
        run.save(update_fields=["deleted_at"])
    return run


@transaction.atomic
def restore_run(run: Run) -> Run:
    run = _relock(run)
    if run.deleted_at is not None:
        run.deleted_at = None
        run.save(update_fields=["deleted_at"])
    return run
