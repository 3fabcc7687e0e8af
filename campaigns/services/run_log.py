"""One logging call of an MLflow client (params, tags, metric points, dataset inputs) written
into its run under one lock and one save (docs/mlflow.md).

MLflow's client sends no request id, so a retried call cannot be told from a new one by an
idempotency key. Instead every part of a call is idempotent by its content, as in MLflow's own
store:

* a metric point is the same point when (run, key, step, timestamp, value) agree: it is stored
  once (a point re-sent by `log_model` with its `model_id` only links the stored point to the
  model);
* a param set again to the same value changes nothing (another value is refused: a new
  configuration needs a new run), a tag set again to the same value neither;
* a dataset input is kept once per (name, digest).

Statements: the run is looked up and locked in one statement, the campaign read once after the
lock (a close that committed meanwhile is seen), the committed campaign's frozen stop rules
once per process, the stored points only when a point could repeat one (its step is not past
the run's last step: one query of both tiers, hot rows and packed blocks, the names' keys read
from the summaries in it, campaigns/selectors/raw_points.points_named_at), then one COPY, one
statement of the metric store and at most one UPDATE of the run (issue 20 item 6: at most 8 for
the common call). A repeat linking a model id adds one UPDATE of the hot rows per model id and
one of the blocks holding such points (metric_packing.link_models), whichever it needs.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone

from campaigns.models import CampaignClosed, Run
from campaigns.selectors import raw_points
from campaigns.services import ingest, metric_packing, run_clock, run_lock
from campaigns.services.run_events import announce_run_save

PointKey = tuple[str, int, int | None, str]


def lock_run(runs: QuerySet[Run] | run_lock.KeyScope, run_id: str, *, durable: bool = True) -> Run:
    """The run `run_id` among `runs` (the caller's scope), locked, with its campaign; raises
    Run.DoesNotExist, or RunRefused when the campaign is closed. `durable`: see
    run_lock.lock_with_campaign."""
    # The campaign is read after the lock, in its own statement (sent with the lock's: one
    # round trip): closing locks every run of the campaign first, so a write that got here
    # after a close committed sees it closed.
    run, campaign = run_lock.lock_with_campaign(runs, run_id, durable=durable)
    if run is None or campaign is None:
        raise Run.DoesNotExist(run_id)
    run.campaign = campaign
    try:
        campaign.refuse_if_closed()
    except CampaignClosed as exc:
        raise ingest.RunRefused(str(exc), run) from exc
    return run


def refuse_if_deleted(run: Run) -> None:
    if run.deleted_at is not None:
        raise ingest.RunRefused(
            f"The run {run.run_id} must be in the 'active' state to log into it: it is deleted; "
            "restore it (runs/restore)",
            run,
        )


@transaction.atomic
def log_to_run(
    runs: QuerySet[Run] | run_lock.KeyScope,
    run_id: str,
    *,
    params: dict[str, str] | None = None,
    tags: dict[str, str] | None = None,
    delete_tags: Sequence[str] = (),
    points: Sequence[ingest.Point] = (),
    inputs: Sequence[dict[str, Any]] = (),
    durable: bool = True,
) -> ingest.Appended:
    """Params, then tags, then inputs, then metrics, all or nothing: the metrics that fire a
    rule come last (the firing batch is still stored)."""
    run = lock_run(runs, run_id, durable=durable)
    refuse_if_deleted(run)
    now = timezone.now()
    fields = run_clock.revive_if_silent(run, now)
    # A completed or failed run takes late data (docs/domain.md §5.9); a stopped one answers
    # with its stop, past its grace.
    late = run.status in ingest.FINISHED
    if not late:
        ingest.refuse_unless_taking_points(run, max((p.step for p in points), default=None), now)
    if params:
        fields += _merge_params(run, params)
    if tags or delete_tags:
        fields += _merge_tags(run, tags or {}, delete_tags)
    if inputs:
        fields += _merge_inputs(run, inputs)
    firing = None
    fresh: list[ingest.Point] = []
    if points:
        fresh, links = _fresh_points(run, points)
        metric_packing.link_models(run_id=run.pk, links=links)
        if fresh:
            changed, firing = ingest.store_points(run, fresh, now)
            fields += changed
    if late:
        # Late data leaves the run's status, hours and clock as they were.
        if fields or fresh:
            run.late_data_at = now
            fields.append("late_data_at")
    else:
        # Every logging call is a heartbeat, at the client's latest timestamp (§5.8).
        fields += run_clock.beat(run, _heard_at(points, now), now, saving=bool(fields))
    if fields:
        run.save(update_fields=sorted(set(fields)))
        announce_run_save(run, fields)
    return ingest.Appended(run, len(fresh), firing)


def _heard_at(points: Sequence[ingest.Point], now: datetime) -> datetime:
    """When the loop last spoke: its points' latest timestamp (the client's clock, as the
    run's start_time and end_time are), else now."""
    stamps = [p.timestamp_ms for p in points if p.timestamp_ms is not None]
    if not stamps:
        return now
    # Any int64 is a valid MLflow timestamp: held within 1970 and now before it is a moment.
    latest = min(max(max(stamps), 0), int(now.timestamp() * 1000))
    return datetime.fromtimestamp(latest / 1000, tz=UTC)


def _merge_params(run: Run, params: dict[str, str]) -> list[str]:
    changed = {k: (run.config[k], v) for k, v in params.items() if k in run.config}
    changed = {k: pair for k, pair in changed.items() if pair[0] != pair[1]}
    if changed:
        key, (old, new) = next(iter(sorted(changed.items())))
        # MLflow's own words (its clients match them), then ours.
        raise ingest.RunRefused(
            f"Changing param values is not allowed. Param with key='{key}' was already logged "
            f"with value='{old}' for run ID='{run.run_id}'. Attempted logging new value "
            f"'{new}': a new configuration needs a new run.",
            run,
        )
    fresh = {k: v for k, v in params.items() if k not in run.config}
    if not fresh:
        return []
    run.config = {**run.config, **fresh}
    run.config_digest = Run.digest_config(run.config)
    return ["config", "config_digest"]


def _merge_tags(run: Run, tags: dict[str, str], delete: Sequence[str]) -> list[str]:
    merged = {**run.tags, **tags}
    for key in delete:
        merged.pop(key, None)
    if merged == run.tags:
        return []
    run.tags = merged
    fields = ["tags"]
    # MLflow's client renames a run by its mlflow.runName tag as well as by runs/update.
    name = tags.get("mlflow.runName")
    if name is not None and name != run.run_name:
        run.run_name = name
        fields.append("run_name")
    return fields


def _input_key(item: dict[str, Any]) -> tuple[str, str]:
    dataset = item.get("dataset") or {}
    return str(dataset.get("name", "")), str(dataset.get("digest", ""))


def _merge_inputs(run: Run, inputs: Sequence[dict[str, Any]]) -> list[str]:
    kept = {_input_key(i): i for i in run.inputs}
    before = len(kept)
    for item in inputs:
        kept.setdefault(_input_key(item), item)
    if len(kept) == before:
        return []
    run.inputs = list(kept.values())
    return ["inputs"]


def point_key(name: str, step: int, timestamp_ms: int | None, value: float, token: str) -> PointKey:
    """MLflow's identity of a point: (key, step, timestamp, value); NaN equals NaN here."""
    shown = token or repr(float(value))
    return (name, step, timestamp_ms, shown)


def _fresh_points(
    run: Run, points: Sequence[ingest.Point]
) -> tuple[list[ingest.Point], list[metric_packing.Link]]:
    """The points not stored yet (nor repeated earlier in the batch), and the links of the
    stored points that repeats carrying a model id the stored point lacks set it on."""
    seen: set[PointKey] = set()
    unique: list[ingest.Point] = []
    for p in points:
        key = point_key(p.name, p.step, p.timestamp_ms, p.value, p.token)
        if key not in seen:
            seen.add(key)
            unique.append(p)
    last = run.last_step
    maybe_stored = [p for p in unique if last is not None and p.step <= last]
    if not maybe_stored:
        # The common case of a loop moving forward: nothing to compare with, no statement.
        return unique, []
    stored = _stored_points(run, maybe_stored)
    fresh, links = [], []
    for p in unique:
        found = stored.get(point_key(p.name, p.step, p.timestamp_ms, p.value, p.token))
        if found is None:
            fresh.append(p)
        elif p.model_id and not found.model_id:
            links.append(found._replace(model_id=p.model_id))
    return fresh, links


def _stored_points(run: Run, points: Sequence[ingest.Point]) -> dict[PointKey, metric_packing.Link]:
    """The stored points, hot or packed, of the points' metrics at their steps, by MLflow's
    identity (the first-logged of equal ones), each with its model id: one query."""
    rows = raw_points.points_named_at(run.pk, {p.name for p in points}, {p.step for p in points})
    found: dict[PointKey, metric_packing.Link] = {}
    for name, block, p in rows:
        found.setdefault(
            point_key(name, p.step, p.timestamp_ms, p.value, p.token),
            metric_packing.Link(p.key_id, p.step, p.seq, block, p.model_id),
        )
    return found
