"""Writes of run data: each is one transaction that locks the run, stores what was sent, applies
the campaign's stop rules (campaigns/domain/stop_rules.py) and records a firing on the run.

The run row is locked (SELECT ... FOR UPDATE) first, so a stop, a finish and concurrent metric
batches of one run are applied one after the other: a batch either lands before a stop, or is
refused after it, never half of each.

A batch that fires a rule is still stored: the NaN that stopped a run is evidence. Later metric
batches are refused (409) naming the stop. Throughput and checkpoints are still taken after a
stop (they cost the rental and say where to resume) but not after a finish.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, NamedTuple

from django.db import IntegrityError, transaction
from django.utils import timezone

from campaigns import events
from campaigns.domain import stop_rules as rules
from campaigns.models import (
    Campaign,
    CampaignClosed,
    CampaignStatus,
    PlannedItem,
    Run,
    RunArtifact,
    RunStatus,
    StopRule,
    ThroughputSample,
)
from campaigns.services import metric_rows, metric_store, run_clock
from campaigns.services.artifact_quota import check_artifact_quota
from campaigns.services.run_events import announce_run_save, save_heard
from campaigns.services.stop_checks import budget_firing, record_stop, rule_specs

log = logging.getLogger(__name__)

FINISHED = frozenset({RunStatus.COMPLETED, RunStatus.FAILED})


class Point(NamedTuple):
    """A validated metric point. `token` is "NaN", "Infinity" or "-Infinity" when not finite.
    `timestamp_ms` and `model_id` are what an MLflow client said (None and "" otherwise)."""

    name: str
    step: int
    value: float
    token: str
    timestamp_ms: int | None = None
    model_id: str = ""


class RunRefused(Exception):
    """The run's state refuses this write (409); `run` is the run as it is now."""

    def __init__(self, message: str, run: Run) -> None:
        super().__init__(message)
        self.run = run


class RunIdTaken(Exception):
    """The run id is already used in this team for another configuration (409)."""


class CampaignNotOpen(Exception):
    """The campaign takes no runs: still a draft, or closed (409)."""


@dataclass(frozen=True)
class Appended:
    run: Run
    accepted: int
    firing: rules.Firing | None


# --- Runs ----------------------------------------------------------------------------------


@transaction.atomic
def open_run(
    campaign: Campaign,
    *,
    run_id: str,
    variant: PlannedItem | None = None,
    kind: str = "full",
    config: dict[str, Any] | None = None,
    gpus: int = 1,
    run_name: str = "",
    started_at: datetime | None = None,
    heartbeat_seconds: int | None = None,
) -> tuple[Run, bool]:
    """Create run `run_id`, or take up the same run again (False); another config → RunIdTaken.

    A run id names one configuration for good (docs/domain.md §4): a restarted job that sends
    the same configuration gets its run back, a fixed configuration needs a new id. A run that
    ended failed is resumed: a new segment from `started_at` (the restarted job's start, else
    now). `started_at` is the client's start, checked by the caller (else now).
    """
    _refuse_unless_open(campaign)
    config = config or {}
    digest = Run.digest_config(config)
    existing = Run.objects.filter(team_id=campaign.team_id, run_id=run_id).first()
    if existing is None:
        now = timezone.now()
        try:
            with transaction.atomic():
                run = Run.objects.create(
                    team_id=campaign.team_id,
                    campaign=campaign,
                    run_id=run_id,
                    variant=variant,
                    kind=kind,
                    gpus=gpus,
                    config=config,
                    config_digest=digest,
                    run_name=run_name or run_id,
                    started_at=started_at or now,
                    heartbeat_at=now,
                    heartbeat_seconds=heartbeat_seconds,
                )
        except IntegrityError:
            # Another request created it between our look and our insert: compare with it.
            existing = Run.objects.get(team_id=campaign.team_id, run_id=run_id)
        else:
            _mark_running(campaign)
            return run, True
    _refuse_another_run(existing, campaign, digest=digest, kind=kind, variant=variant, gpus=gpus)
    if existing.status == RunStatus.FAILED:
        return _resumed(existing, started_at), False
    return existing, False


def _refuse_unless_open(campaign: Campaign) -> None:
    if campaign.status == CampaignStatus.DRAFT:
        raise CampaignNotOpen(
            "commit the plan before logging runs: stop rules are written before the runs"
        )
    if campaign.status == CampaignStatus.CLOSED:
        raise CampaignNotOpen("the campaign is closed: it takes no new runs")


def _refuse_another_run(
    existing: Run,
    campaign: Campaign,
    *,
    digest: str,
    kind: str,
    variant: PlannedItem | None,
    gpus: int,
) -> None:
    run_id = existing.run_id
    if existing.campaign_id != campaign.pk:
        raise RunIdTaken(f"run id {run_id!r} is already used in another campaign of this team")
    if existing.config_digest != digest:
        raise RunIdTaken(
            f"run {run_id!r} exists with another configuration: "
            "a new configuration needs a new run id"
        )
    if existing.kind != kind or existing.variant_id != (variant.pk if variant else None):
        raise RunIdTaken(
            f"run {run_id!r} exists as a {existing.kind} run of variant "
            f"{existing.variant_id}: a new run needs a new run id"
        )
    if existing.gpus != gpus:
        # Its cost is its hours × GPUs: another GPU count is another run.
        raise RunIdTaken(
            f"run {run_id!r} exists on {existing.gpus} GPU(s), not {gpus}: "
            "a new run needs a new run id"
        )


def _resumed(run: Run, started_at: datetime | None) -> Run:
    """A failed run taken up again by a restarted job: a new segment (docs/domain.md §11.6)."""
    run = locked(run)
    if run.status != RunStatus.FAILED:
        return run
    now = timezone.now()
    fields = run_clock.add_segment(run, resume_at=started_at or now, now=now)
    run.save(update_fields=fields)
    announce_run_save(run, fields)
    return run


def _mark_running(campaign: Campaign) -> None:
    """The first run moves a committed campaign to running; its status is one the forecast
    reads."""
    if campaign.status != CampaignStatus.COMMITTED:
        return
    locked = Campaign.objects.select_for_update(no_key=True).get(pk=campaign.pk)
    if locked.status == CampaignStatus.COMMITTED:
        locked.status = CampaignStatus.RUNNING
        locked.save(update_fields=["status", "updated_at"])
        campaign.status = locked.status
        events.emit(events.PLAN_CHANGED, campaign_id=locked.pk)


def locked(run: Run) -> Run:
    """The run, locked, in a campaign that still takes run data."""
    return _locked_with_commit(run)[0]


def _locked_with_commit(run: Run) -> tuple[Run, Any]:
    """The run, locked, in a campaign that still takes run data, and the campaign's commit
    moment (what rule_specs keys the frozen stop rules by).

    The campaign's status is read after the lock, in its own statement: closing locks every run
    of the campaign first, so a write that got here after a close committed sees it closed.
    """
    locked = Run.objects.select_for_update().get(pk=run.pk)
    campaign = Campaign.objects.only("status", "closed_at", "committed_at").get(
        pk=locked.campaign_id
    )
    try:
        campaign.refuse_if_closed()
    except CampaignClosed as exc:
        raise RunRefused(str(exc), locked) from exc
    return locked, campaign.committed_at


def refuse_unless_running(run: Run) -> None:
    if run.status == RunStatus.STOPPED:
        by = f"rule #{run.stop_rule_id}" if run.stop_rule_id else "hand"
        raise RunRefused(
            f"run {run.run_id!r} was stopped by {by}: {run.stop_reason}; "
            "a fixed configuration needs a new run id",
            run,
        )
    if run.status in FINISHED:
        raise RunRefused(f"run {run.run_id!r} is finished ({run.status})", run)


def refuse_unless_taking_points(run: Run, last_step: int | None, now: Any) -> None:
    """Like refuse_unless_running, except that a run stopped by a rule with a grace still takes
    writes up to `last_step` while the grace lasts (docs/domain.md §4.6): the loop reaches and
    saves its checkpoint. Past it, refused naming the grace."""
    if run.status != RunStatus.STOPPED or run.stop_rule_id is None or run.finished_at:
        refuse_unless_running(run)
        return
    grace = StopRule.objects.only("grace_steps", "grace_minutes").get(pk=run.stop_rule_id).grace
    since = (now - run.stopped_at).total_seconds() if run.stopped_at else 0.0
    step = (run.stop_step or 0) if last_step is None else last_step
    if rules.within_grace(grace, stop_step=run.stop_step, last_step=step, seconds_since_stop=since):
        return
    if grace.given:
        raise RunRefused(
            f"run {run.run_id!r} was stopped by rule #{run.stop_rule_id}: {run.stop_reason}; "
            f"its grace of {grace} is over",
            run,
        )
    refuse_unless_running(run)


def refuse_if_finished(run: Run) -> None:
    if run.status in FINISHED:
        raise RunRefused(f"run {run.run_id!r} is finished ({run.status})", run)


# --- Metrics -------------------------------------------------------------------------------


@transaction.atomic
def append_metrics(run: Run, points: Sequence[Point]) -> Appended:
    """Store a batch of points (all or nothing) and apply the metric stop rules to it."""
    run, committed_at = _locked_with_commit(run)
    now = timezone.now()
    revived = run_clock.revive_if_silent(run, now)
    refuse_unless_taking_points(run, max((p.step for p in points), default=None), now)
    fields, firing = revived, None
    if points:
        stored, firing = store_points(run, points, now, committed_at=committed_at)
        fields = fields + stored
    # Every batch is a heartbeat (docs/domain.md §5.8), on the save it makes anyway.
    fields += run_clock.beat(run, now, now, saving=bool(fields))
    if fields:
        run.save(update_fields=fields)
        announce_run_save(run, fields)
    return Appended(run, len(points), firing)


def store_points(
    run: Run, points: Sequence[Point], now: Any, *, committed_at: Any = None
) -> tuple[list[str], Any]:
    """Insert points into the locked, running `run` and apply the metric stop rules to them;
    the run's changed fields (for the caller's one save) and the firing, if any.
    `committed_at`: the campaign's commit moment when the caller read it after the lock (else
    taken from `run.campaign` when that is loaded), so the frozen rules come from memory."""
    # The summaries first: their ids are the points' keys, their counts the points' seq.
    keys = metric_store.record_points(run.pk, [(p.name, p.step, p.value) for p in points], now)
    metric_rows.insert_points(run.pk, points, keys, now)
    if run.status == RunStatus.STOPPED or run.status in FINISHED:
        # Points within a rule's grace: stored, the first firing stays the run's stop. Late
        # data of a finished run (docs/domain.md §5.9): stored, its status stays.
        return _advance_last_step(run, points), None
    # The MLflow path has the campaign read after the lock (run_log.lock_run), /api/v1/'s
    # append_metrics its commit moment: either lets the frozen rules come from this process's
    # copy.
    if committed_at is None and Run.campaign.is_cached(run):
        committed_at = run.campaign.committed_at
    specs = rule_specs(run.campaign_id, committed_at)
    watched = {name for spec in specs for name in spec.metric_names}
    firing = rules.evaluate_points(
        specs,
        (rules.MetricPoint(p.name, p.step, p.value) for p in points if p.name in watched),
    )
    fields = _advance_last_step(run, points)
    if firing is None:
        firing = budget_firing(run, specs, now)
    if firing is not None:
        fields += record_stop(run, firing, now)
    return fields, firing


def _advance_last_step(run: Run, points: Sequence[Point]) -> list[str]:
    top = max(p.step for p in points)
    if run.last_step is None or top > run.last_step:
        run.last_step = top
        return ["last_step"]
    return []


# --- Throughput and checkpoints ------------------------------------------------------------


@transaction.atomic
def record_throughput(run: Run, **measured: Any) -> ThroughputSample:
    run = locked(run)
    now = timezone.now()
    fields = run_clock.revive_if_silent(run, now)
    refuse_if_finished(run)
    sample = ThroughputSample.objects.create(run=run, **measured)
    events.emit(
        events.THROUGHPUT_RECORDED, run_id=run.pk, campaign_id=run.campaign_id, kind=run.kind
    )
    if run.status == RunStatus.RUNNING:
        # A throughput report says the run is still renting time: check the budget too.
        firing = budget_firing(run, rule_specs(run.campaign_id), now)
        if firing is not None:
            fields += record_stop(run, firing, now)
    save_heard(run, fields, now)
    sample.run = run
    return sample


# --- Params, tags and artifacts (the MLflow facade, docs/mlflow.md) ---------------------------


@transaction.atomic
def add_params(run: Run, params: dict[str, str]) -> Run:
    """Add configuration keys to a running run (MLflow's params are its configuration).

    A key already set to another value is refused (RunRefused): a new configuration needs a new
    run. The digest follows the configuration, so /api/v1/ recognises the same run again.
    """
    run = locked(run)
    refuse_unless_running(run)
    changed = {k: (run.config[k], v) for k, v in params.items() if k in run.config}
    changed = {k: pair for k, pair in changed.items() if pair[0] != pair[1]}
    if changed:
        key, (old, new) = next(iter(sorted(changed.items())))
        raise RunRefused(
            f"param {key!r} of run {run.run_id!r} is already {old!r}, not {new!r}: "
            "a new configuration needs a new run",
            run,
        )
    fresh = {k: v for k, v in params.items() if k not in run.config}
    if fresh:
        run.config = {**run.config, **fresh}
        run.config_digest = Run.digest_config(run.config)
        run.save(update_fields=["config", "config_digest"])
    return run


@transaction.atomic
def set_tags(run: Run, tags: dict[str, str], *, delete: Sequence[str] = ()) -> Run:
    """Set (or delete) free-form tags of a running run; they are kept, not interpreted."""
    run = locked(run)
    refuse_unless_running(run)
    merged = {**run.tags, **tags}
    for key in delete:
        merged.pop(key, None)
    if merged != run.tags:
        run.tags = merged
        run.save(update_fields=["tags"])
    return run


@transaction.atomic
def record_artifact(
    run: Run, *, path: str, size_bytes: int, sha256: str, storage_name: str, content_type: str = ""
) -> tuple[RunArtifact, str | None]:
    """Record (or replace) the file stored at `path` for the run; returns it and the storage
    name of the file it replaced, for the caller to delete once this has committed.

    Taken in any state: a stopped or finished run's files are its evidence and deliverables.
    """
    run = locked(run)
    previous = RunArtifact.objects.select_for_update().filter(run=run, path=path).first()
    # Under the run's lock, with the size actually stored (docs/domain.md §23).
    check_artifact_quota(run, path=path, size_bytes=size_bytes)
    replaced = None
    if previous is None:
        artifact = RunArtifact.objects.create(
            run=run,
            path=path,
            size_bytes=size_bytes,
            sha256=sha256,
            storage_name=storage_name,
            content_type=content_type,
        )
    else:
        if previous.storage_name != storage_name:
            replaced = previous.storage_name
        previous.size_bytes = size_bytes
        previous.sha256 = sha256
        previous.storage_name = storage_name
        previous.content_type = content_type
        previous.save()
        artifact = previous
    return artifact, replaced
