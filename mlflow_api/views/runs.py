"""Runs: create (on a planned item of the campaign), get, update (end, rename, resume),
delete and restore.

MLflow's `run_name` is a display name (any text, renamable); the Campaign Desk run id is
generated, or taken from the tag `desk.run_id`. A rerun of a script is a new run. MLflow's
client sends no request id, and its own server creates a second run for a retried create, as
this one does: a create is never answered from a stored body (docs/mlflow.md).
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse
from django.utils import timezone

from campaigns.api.serializers import run_id_is_valid
from campaigns.domain import run_hours
from campaigns.models import (
    Campaign,
    ItemStatus,
    PlannedItem,
    Run,
    RunKind,
    RunStatus,
)
from campaigns.services import ingest, run_lifecycle
from campaigns.services.run_log import refuse_if_deleted
from mlflow_api import services, shapes
from mlflow_api.auth import Caller
from mlflow_api.domain import names
from mlflow_api.errors import MlflowError
from mlflow_api.views.lookups import (
    experiment_of,
    refusal,
    refused,
    require_running,
    run_not_found,
    run_of,
    write_scope,
)
from mlflow_api.views.wire import (
    MAX_TAG_VALUE,
    answer,
    checked_run_name,
    endpoint,
    is_id,
    key_values,
    read_body,
    text_field,
)

MAX_RUN_NAME = 500
FINISHED_STATUSES = {
    "FINISHED": RunStatus.COMPLETED,
    "FAILED": RunStatus.FAILED,
    "KILLED": RunStatus.FAILED,
}


def _item(caller: Caller, campaign: Campaign, tags: dict[str, str]) -> PlannedItem:
    named = tags.get("desk.variant", "").strip()
    item: PlannedItem | None
    if named:
        items = PlannedItem.objects.filter(campaign=campaign)
        item = (items.filter(pk=int(named)).first() if is_id(named) else None) or items.filter(
            name=named
        ).first()
        if item is None:
            raise MlflowError(
                "INVALID_PARAMETER_VALUE",
                f"tag desk.variant={named!r} names no planned item of campaign {campaign.pk}",
            )
    elif caller.key is not None and caller.key.item_id is not None:
        item = caller.key.item
    else:
        raise MlflowError(
            "INVALID_PARAMETER_VALUE",
            f"which planned item does this run try? Set the tag desk.variant to an item id or "
            f"name of campaign {campaign.pk}, or use an ingest key bound to an item "
            f"(manage.py issue_ingest_key {campaign.pk} --item ID, or POST "
            f"/api/v1/campaigns/{campaign.pk}/ingest-keys/ with an item)",
        )
    assert item is not None
    if item.status == ItemStatus.CUT:
        raise MlflowError("INVALID_PARAMETER_VALUE", f"'{item.name}' was cut by a decision")
    return item


def _kind(caller: Caller, tags: dict[str, str]) -> str:
    kind = tags.get("desk.kind", "").strip() or (caller.key.kind if caller.key else "") or "pilot"
    if kind not in RunKind.values:
        raise MlflowError(
            "INVALID_PARAMETER_VALUE", f"tag desk.kind is one of {', '.join(RunKind.values)}"
        )
    return kind


def _gpus(tags: dict[str, str]) -> int:
    """The GPUs the run occupies (its cost is its hours × GPUs; its throughput is over them):
    the tag `desk.gpus`, default 1."""
    text = tags.get("desk.gpus", "").strip() or "1"
    if not is_id(text) or not 1 <= int(text) <= 2**31 - 1:
        raise MlflowError("INVALID_PARAMETER_VALUE", "tag desk.gpus is a whole number >= 1")
    return int(text)


def _run_id(tags: dict[str, str]) -> str:
    run_id = tags.get("desk.run_id", "").strip() or uuid.uuid4().hex
    if not run_id_is_valid(run_id):
        raise MlflowError(
            "INVALID_PARAMETER_VALUE",
            f"tag desk.run_id={run_id!r} cannot be a Campaign Desk run id: use letters, digits "
            "and . _ : + = @ ~ - (up to 200), starting with a letter or digit",
        )
    return run_id


def _take_up(existing: Run, campaign: Campaign, item: PlannedItem, kind: str) -> Run:
    """A restarted job naming its run id (tag desk.run_id) takes the run up again, if it is
    the same run (campaign, item, kind) and still running."""
    if (
        existing.campaign_id != campaign.pk
        or existing.variant_id != item.pk
        or existing.kind != kind
    ):
        raise MlflowError(
            "RESOURCE_ALREADY_EXISTS",
            f"run {existing.run_id!r} exists for another campaign, item or kind: "
            "a new run needs a new run id",
        )
    require_running(existing)
    return existing


def _ms(data: dict[str, Any], field: str) -> int | None:
    """MLflow's int64 milliseconds (a number, or its text as proto3 JSON writes it)."""
    value = data.get(field)
    if value is None or value == "":
        return None
    if isinstance(value, str) and is_id(value.removeprefix("-")):
        value = int(value)
    if type(value) is not int or not -(2**63) <= value < 2**63:
        raise MlflowError("INVALID_PARAMETER_VALUE", names.invalid(field, value))
    return value


@endpoint("POST")
def run_create(request: HttpRequest, caller: Caller) -> HttpResponse:
    data = read_body(request)
    place = experiment_of(caller, data.get("experiment_id"))
    if place.experiment is not None and place.experiment.deleted_at is not None:
        raise MlflowError(
            "INVALID_STATE",
            f"The experiment {place.experiment_id} must be in the 'active' state.",
        )
    campaign = place.campaign
    caller.require_write(campaign.team_id)
    start_ms = _ms(data, "start_time")
    tags = key_values(data.get("tags"), "tags", MAX_TAG_VALUE)
    if data.get("user_id") and "mlflow.user" not in tags:
        tags["mlflow.user"] = text_field(data, "user_id")
    name = checked_run_name(
        text_field(data, "run_name", required=False, limit=MAX_RUN_NAME), "run_name"
    )
    item = _item(caller, campaign, tags)
    kind = _kind(caller, tags)
    name = name or tags.get("mlflow.runName", "")[:MAX_RUN_NAME]
    run_id = _run_id(tags)
    name = name or run_id
    tags["mlflow.runName"] = name
    existing = Run.objects.filter(team_id=campaign.team_id, run_id=run_id).first()
    if existing is not None:
        run = _take_up(existing, campaign, item, kind)
    else:
        try:
            run, _created = ingest.open_run(
                campaign,
                run_id=run_id,
                variant=item,
                kind=kind,
                config={},
                run_name=name,
                gpus=_gpus(tags),
                started_at=_start(campaign, data.get("start_time")),
            )
        except ingest.CampaignNotOpen as exc:
            raise MlflowError("INVALID_PARAMETER_VALUE", str(exc)) from exc
        except ingest.RunIdTaken as exc:
            raise MlflowError("RESOURCE_ALREADY_EXISTS", str(exc)) from exc
    try:
        run = ingest.set_tags(run, tags)
    except ingest.RunRefused as exc:
        raise refused(exc) from exc
    run.mlflow = services.place_run(run=run, experiment=place.experiment, start_time_ms=start_ms)
    return answer({"run": shapes.run(run)})


@endpoint("GET")
def run_get(request: HttpRequest, caller: Caller) -> HttpResponse:
    return answer({"run": shapes.run(run_of(caller, read_body(request)))})


# The latest end_time a datetime holds (year 9999), in ms: MLflow's int64 goes far beyond it.
END_TIME_MAX = 253_402_300_799_000


def moment(ms: Any, name: str) -> datetime | None:
    """MLflow's start_time or end_time (ms since 1970, an int or its text) as a moment; None
    when not sent."""
    if ms is None or ms == "":
        return None
    text = str(ms)
    if isinstance(ms, bool) or not isinstance(ms, int | str) or not is_id(text):
        raise MlflowError("INVALID_PARAMETER_VALUE", f"{name} is milliseconds since 1970")
    if int(text) > END_TIME_MAX:
        raise MlflowError(
            "INVALID_PARAMETER_VALUE", f"{name} is at most {END_TIME_MAX} (the year 9999)"
        )
    return datetime.fromtimestamp(int(text) / 1000, tz=UTC)


def _start(campaign: Campaign, start_ms: Any) -> datetime | None:
    """The client's start_time, the run's start (docs/domain.md §5.8), at most a few minutes
    ahead of this server as /api/v1/'s started_at. MLflow keeps any earlier start, and so does
    the facade's answer (the run's MLflow side holds it as sent: MLflow's own tests create runs
    that started in 1970); the run's clock starts no earlier than the plan's commit, so no hour
    before the campaign existed is counted."""
    started = moment(start_ms, "start_time")
    if started is None:
        return None
    if campaign.committed_at is not None:
        started = max(started, campaign.committed_at)
    try:
        return run_hours.checked_moment(
            started, now=timezone.now(), not_before=started, name="start_time"
        )
    except ValueError as exc:
        raise MlflowError("INVALID_PARAMETER_VALUE", str(exc)) from exc


def _finish(run: Run, status: str, end_ms: Any) -> Run:
    """FINISHED → completed, FAILED/KILLED → failed, ended at the client's end_time: the run's
    measured hours (docs/domain.md §5.8). A run already finished answers as it is, as MLflow's
    set_terminated would succeed (its hours and cost are final here)."""
    if run.finished_at is not None:
        return run
    ended = moment(end_ms, "end_time")
    try:
        return run_lifecycle.finish_run(run=run, status=status, ended_at=ended)
    except ValidationError as exc:
        raise MlflowError("INVALID_PARAMETER_VALUE", " ".join(exc.messages)) from exc


@endpoint("POST")
def run_update(request: HttpRequest, caller: Caller) -> HttpResponse:
    """Rename (`run_name`, any state), resume (`RUNNING` on a failed run: a new segment), or
    end the run. A run a rule stopped stays stopped (its hours are still recorded)."""
    data = read_body(request)
    runs, run_id = write_scope(caller, data)
    run = runs.filter(run_id=run_id).first()
    if run is None:
        raise run_not_found(run_id)
    status = str(data.get("status") or "")
    end_ms = _ms(data, "end_time")
    try:
        name = checked_run_name(
            text_field(data, "run_name", required=False, limit=MAX_RUN_NAME), "run_name"
        )
        if name:
            run = run_lifecycle.rename_run(run, name=name)
        if status == "RUNNING":
            refuse_if_deleted(run)
            run = run_lifecycle.resume_run(run=run)
        elif status in FINISHED_STATUSES:
            run = _finish(run, FINISHED_STATUSES[status], data.get("end_time"))
            if end_ms is not None:
                services.place_run(run=run, experiment=None, end_time_ms=end_ms)
    except ingest.RunRefused as exc:
        raise refusal(exc) from exc
    return answer({"run_info": shapes.run_info(_reloaded(run))})


def _reloaded(run: Run) -> Run:
    return Run.objects.select_related("campaign", "mlflow", "mlflow__experiment").get(pk=run.pk)


def _lifecycle(request: HttpRequest, caller: Caller, action: Any) -> HttpResponse:
    data = read_body(request)
    runs, run_id = write_scope(caller, data)
    run = runs.filter(run_id=run_id).first()
    if run is None:
        raise run_not_found(run_id)
    try:
        action(run)
    except ingest.RunRefused as exc:
        raise refusal(exc) from exc
    return answer({})


@endpoint("POST")
def run_delete(request: HttpRequest, caller: Caller) -> HttpResponse:
    """Soft delete: hidden from runs/search, refuses logging, kept with its hours and cost."""
    return _lifecycle(request, caller, run_lifecycle.delete_run)


@endpoint("POST")
def run_restore(request: HttpRequest, caller: Caller) -> HttpResponse:
    return _lifecycle(request, caller, run_lifecycle.restore_run)
