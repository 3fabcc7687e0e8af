"""A run's clock (docs/domain.md §5.8): when it was last heard from, how it ends with its
measured hours, and how a resumed run adds a segment. The rules are in
campaigns/domain/run_hours.py; these helpers set the fields of a run the caller has locked and
return their names, for the caller's one save.

Hearing from a run costs no statement of its own on the hot path: a metrics batch already
saves the run (its last step moved), and the heartbeat rides on that save. A write that saves
nothing else moves the heartbeat only when it is older than HEARTBEAT_RESOLUTION, so a loop
logging many small batches a second adds at most one UPDATE every few seconds.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from decimal import Decimal

from campaigns.domain import run_hours
from campaigns.models import Run, RunSegment, RunStatus

HEARTBEAT_RESOLUTION = timedelta(seconds=10)


def beat(run: Run, at: datetime, now: datetime, *, saving: bool) -> list[str]:
    """Hear from the locked `run` at `at` (the client's time, at most now): ["heartbeat_at"]
    when it moved and the caller saves the run anyway or the last one is
    HEARTBEAT_RESOLUTION old; [] otherwise."""
    heard = run_hours.heard(run.heartbeat_at, at, now)
    if heard == run.heartbeat_at:
        return []
    last = run.heartbeat_at
    if not saving and last is not None and heard - last < HEARTBEAT_RESOLUTION:
        return []
    run.heartbeat_at = heard
    return ["heartbeat_at"]


def last_heard(run: Run) -> datetime:
    """The run's last sign of life in its current segment (its start when never heard)."""
    start = run.segment_start
    return max(run.heartbeat_at, start) if run.heartbeat_at is not None else start


def end(
    run: Run,
    *,
    status: str,
    ended: datetime,
    now: datetime,
    observed_hours: Decimal | None = None,
    silent: bool = False,
) -> list[str]:
    """End the locked, unfinished `run` at `ended`: its measured hours, and its hours (those
    stated, else the measured ones). A stopped run keeps its stop."""
    if run.status != RunStatus.STOPPED:
        run.status = status
    run.ended_at = max(ended, run.segment_start)
    run.measured_hours = run_hours.measured_hours(
        started=run.segment_start, ended=run.ended_at, prior_hours=run.prior_hours
    )
    run.observed_hours = run.measured_hours if observed_hours is None else observed_hours
    run.finished_at = now
    run.ended_silent = silent
    return [
        "status",
        "ended_at",
        "measured_hours",
        "observed_hours",
        "finished_at",
        "ended_silent",
    ]


def add_segment(run: Run, *, resume_at: datetime, now: datetime) -> list[str]:
    """Keep the ended stretch of the locked, ended `run` as a RunSegment with its own hours,
    and set the run running again from `resume_at` (docs/domain.md §11.6)."""
    ended = run.ended_at or run.finished_at or now
    total = run.observed_hours
    if total is None:
        total = run_hours.measured_hours(
            started=run.segment_start, ended=ended, prior_hours=run.prior_hours
        )
    hours = max(total - run.prior_hours, Decimal(0))
    RunSegment.objects.create(
        run=run,
        number=run.segments.count() + 1,
        started_at=run.segment_start,
        ended_at=ended,
        status=run.status,
        hours=hours,
        last_step=run.last_step,
    )
    run.prior_hours = min(run.prior_hours + hours, run_hours.HOURS_MAX)
    run.status = RunStatus.RUNNING
    run.segment_started_at = max(resume_at, ended)
    run.heartbeat_at = max(now, run.segment_started_at)
    for name in ("finished_at", "ended_at", "observed_hours", "measured_hours"):
        setattr(run, name, None)
    run.observed_reason = ""
    run.ended_silent = False
    return [
        "prior_hours",
        "status",
        "segment_started_at",
        "heartbeat_at",
        "finished_at",
        "ended_at",
        "observed_hours",
        "measured_hours",
        "observed_reason",
        "ended_silent",
    ]


def revive_if_silent(run: Run, now: datetime) -> list[str]:
    """A run the sweep ended for silence (docs/domain.md §5.8) that is heard from again was
    alive: it goes on in a new segment from where the sweep ended it, so no hour is lost and
    each segment's cost is posted once. Any other run: nothing ([])."""
    if not run.ended_silent or run.status != RunStatus.FAILED:
        return []
    return add_segment(run, resume_at=run.ended_at or now, now=now)
