"""A run's life after it opens: its heartbeat, stop, finish with measured hours, the sweep that
ends a silent run, resumption, name and soft deletion (the API's run actions, the MLflow
facade's runs/update, runs/delete, runs/restore; docs/domain.md §5.8, §11.6, docs/mlflow.md).

* A run is heard from (`record_heartbeat`, and every batch, throughput and checkpoint:
  campaigns/services/run_clock.py). Finishing ends it at the client's end (else now) with its
  measured hours, or the hours the finish stated; a pilot without a throughput of its own gets
  the one its metrics tell (campaigns/services/logged_throughput.py) first.
* A run not heard from for RUN_SILENT_MULTIPLE × its heartbeat interval (and at least
  RUN_SILENT_MIN_SECONDS) is ended by the beat task as `failed` (a stopped run stays stopped),
  its hours ending at its last heartbeat: a crashed or killed loop.
* A run that ended (completed, or failed: MLflow's FINISHED, FAILED or KILLED) can be set running
  again while its campaign takes runs, as MLflow's server allows: the stretch that ended is kept
  as a RunSegment with its own hours, and the run's hours become the sum of its segments (so
  each hour is costed once). A run a rule (or a person) stopped stays stopped: the stop rules
  still hold for a resumed run.
* The display name (`run_name`) is any text and can change; the run id never does. Deleting
  hides a run from searches and refuses logging until it is restored; nothing is removed.
"""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal

from django.conf import settings
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from campaigns import signals
from campaigns.domain import run_hours
from campaigns.models import Run, RunStatus, StopRule
from campaigns.services import ingest, run_clock
from campaigns.services.logged_throughput import record_logged_throughput
from campaigns.services.run_events import announce_run_save
from campaigns.services.run_log import lock_run
from campaigns.services.stop_checks import STOP_FIELDS


def _relock(run: Run) -> Run:
    return lock_run(Run.objects.filter(pk=run.pk), run.run_id)


@transaction.atomic
def rename_run(run: Run, *, name: str) -> Run:
    run = _relock(run)
    if run.run_name != name:
        run.run_name = name
        run.tags = {**run.tags, "mlflow.runName": name}
        run.save(update_fields=["run_name", "tags"])
    return run


@transaction.atomic
def record_heartbeat(*, run: Run, gpus: int | None = None, acting_user: User | None = None) -> Run:
    """The loop is alive: its run was heard from now. A run the sweep ended for silence goes
    on in a new segment; a finished run refuses (RunRefused), another GPU count too (400)."""
    run = _relock(run)
    now = timezone.now()
    fields = run_clock.revive_if_silent(run, now)
    if gpus is not None and gpus != run.gpus:
        raise ValidationError(
            {"gpus": f"run {run.run_id!r} was opened on {run.gpus} GPU(s), not {gpus}"}
        )
    if run.finished_at is not None:
        raise ingest.RunRefused(f"run {run.run_id!r} is finished ({run.status})", run)
    fields += run_clock.beat(run, now, now, saving=True)
    if fields:
        run.save(update_fields=fields)
        announce_run_save(run, fields)
    return run


@transaction.atomic
def stop_run(
    *,
    run: Run,
    reason: str,
    rule: StopRule | None = None,
    step: int | None = None,
    acting_user: User | None = None,
) -> Run:
    """Stop a run by hand (or by a rule applied by a person); the reason is kept with the run."""
    run = _relock(run)
    ingest.refuse_unless_running(run)
    run.status = RunStatus.STOPPED
    run.stop_rule = rule
    run.stop_reason = reason.strip()
    run.stop_step = step if step is not None else run.last_step
    run.stopped_at = timezone.now()
    run.save(update_fields=list(STOP_FIELDS))
    announce_run_save(run, ["status"])
    signals.run_stopped.send(sender=Run, run=run)
    return run


def _finished_again(run: Run, status: str, observed_hours: Decimal | None) -> Run:
    """Finishing twice the same way answers the same run; another way is refused."""
    same_status = run.status == status or run.status == RunStatus.STOPPED
    if same_status and (observed_hours is None or run.observed_hours == observed_hours):
        return run
    raise ingest.RunRefused(f"run {run.run_id!r} is already finished ({run.status})", run)


def _checked_end(run: Run, ended_at: datetime | None, now: datetime) -> datetime:
    if ended_at is None:
        return now
    try:
        return run_hours.checked_moment(
            ended_at, now=now, not_before=run.segment_start, name="ended_at"
        )
    except ValueError as exc:
        raise ValidationError({"ended_at": f"{exc} (when this stretch of the run began)"}) from exc


@transaction.atomic
def finish_run(
    *,
    run: Run,
    status: str,
    observed_hours: Decimal | None = None,
    ended_at: datetime | None = None,
    acting_user: User | None = None,
) -> Run:
    """End a run at `ended_at` (the client's end, else now) with its measured hours, or the
    `observed_hours` the finish states (they count even when it failed or was stopped).

    A stopped run keeps its stop: finishing it records its hours, it never becomes completed.
    """
    run = _relock(run)
    if run.finished_at is not None:
        return _finished_again(run, status, observed_hours)
    now = timezone.now()
    ended = _checked_end(run, ended_at, now)
    record_logged_throughput(run=run, now=now, acting_user=acting_user)
    fields = run_clock.end(run, status=status, ended=ended, now=now, observed_hours=observed_hours)
    run.save(update_fields=fields)
    announce_run_save(run, fields)
    # Its hours are final: the ledger posts an hourly run's cost, in this transaction.
    signals.run_finished.send(sender=Run, run=run)
    return run


def silence_limit(run: Run) -> float:
    """Seconds without a heartbeat after which `run` has gone silent (docs/domain.md §5.8)."""
    return run_hours.silence_limit(
        interval=float(run.heartbeat_seconds or settings.RUN_HEARTBEAT_SECONDS),
        multiple=settings.RUN_SILENT_MULTIPLE,
        minimum=settings.RUN_SILENT_MIN_SECONDS,
    )


@transaction.atomic
def end_silent_run(*, run: Run, now: datetime, acting_user: User | None = None) -> bool:
    """End `run` at its last heartbeat if it is still unfinished and silent at `now`."""
    try:
        run = _relock(run)
    except ingest.RunRefused:
        return False  # a closed campaign's run is the close's to settle
    heard = run_clock.last_heard(run)
    silent = run_hours.is_silent(heartbeat=heard, now=now, limit_seconds=silence_limit(run))
    if run.finished_at is not None or not silent:
        return False
    record_logged_throughput(run=run, now=now, acting_user=acting_user)
    fields = run_clock.end(run, status=RunStatus.FAILED, ended=heard, now=now, silent=True)
    run.save(update_fields=fields)
    announce_run_save(run, fields)
    signals.run_finished.send(sender=Run, run=run)
    return True


def end_silent_runs(*, now: datetime | None = None, acting_user: User | None = None) -> int:
    """The beat task's sweep: end every unfinished run gone silent, each in its own
    transaction (one that fails leaves the others ended); how many were ended."""
    now = now or timezone.now()
    unfinished = Run.objects.filter(
        finished_at__isnull=True, status__in=[RunStatus.RUNNING, RunStatus.STOPPED]
    ).only("pk", "run_id", "heartbeat_at", "heartbeat_seconds", "started_at", "segment_started_at")
    ended = 0
    for run in unfinished:
        limit = silence_limit(run)
        if run_hours.is_silent(heartbeat=run_clock.last_heard(run), now=now, limit_seconds=limit):
            ended += end_silent_run(run=run, now=now, acting_user=acting_user)
    return ended


@transaction.atomic
def resume_run(*, run: Run, acting_user: User | None = None) -> Run:
    """Set a finished run running again (a running run is left as it is); RunRefused for a
    stopped run (its stop holds) or a closed campaign (docs/domain.md §5.9)."""
    run = _relock(run)
    if run.status == RunStatus.RUNNING:
        return run
    if run.status not in ingest.FINISHED:
        ingest.refuse_unless_running(run)  # a stopped run: raises with the rule's reason
    now = timezone.now()
    fields = run_clock.add_segment(run, resume_at=now, now=now)
    run.save(update_fields=fields)
    announce_run_save(run, fields)
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
