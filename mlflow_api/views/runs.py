"""Runs: create (on a planned item of the campaign), get, and update (end) a run."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from django.http import HttpRequest, HttpResponse
from django.utils import timezone

from campaigns.api.serializers import run_id_is_valid
from campaigns.models import (
    Campaign,
    ItemStatus,
    PlannedItem,
    Run,
    RunKind,
    RunStatus,
)
from campaigns.services import ingest
from mlflow_api import shapes
from mlflow_api.auth import Caller
from mlflow_api.errors import MlflowError
from mlflow_api.views.lookups import (
    campaign_of,
    refused,
    require_running,
    run_of,
)
from mlflow_api.views.retries import once, run_post
from mlflow_api.views.wire import (
    HOURS_MAX,
    MAX_TAG_VALUE,
    answer,
    endpoint,
    key_values,
    read_body,
    text_field,
)


def _item(caller: Caller, campaign: Campaign, tags: dict[str, str]) -> PlannedItem:
    named = tags.get("desk.variant", "").strip()
    item: PlannedItem | None
    if named:
        items = PlannedItem.objects.filter(campaign=campaign)
        item = (items.filter(pk=int(named)).first() if named.isdigit() else None) or items.filter(
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


@endpoint("POST")
def run_create(request: HttpRequest, caller: Caller) -> HttpResponse:
    data = read_body(request)
    campaign = campaign_of(caller, data.get("experiment_id"))
    caller.require_write(campaign.team_id)
    tags = key_values(data.get("tags"), "tags", MAX_TAG_VALUE)
    if data.get("user_id") and "mlflow.user" not in tags:
        tags["mlflow.user"] = text_field(data, "user_id")
    item = _item(caller, campaign, tags)
    kind = _kind(caller, tags)
    run_id = text_field(data, "run_name", required=False) or tags.get("mlflow.runName") or ""
    run_id = run_id or uuid.uuid4().hex
    if not run_id_is_valid(run_id):
        raise MlflowError(
            "INVALID_PARAMETER_VALUE",
            f"run name {run_id!r} cannot be a Campaign Desk run id: use letters, digits and "
            ". _ : + = @ ~ - (up to 200), starting with a letter or digit",
        )

    def work() -> dict[str, Any]:
        existing = Run.objects.filter(team_id=campaign.team_id, run_id=run_id).first()
        if existing is not None:
            # A restarted job with the same run name takes its run up again, if it is the same
            # run (campaign, item, kind) and still running.
            if (
                existing.campaign_id != campaign.pk
                or existing.variant_id != item.pk
                or existing.kind != kind
            ):
                raise MlflowError(
                    "RESOURCE_ALREADY_EXISTS",
                    f"run {run_id!r} exists for another campaign, item or kind: "
                    "a new run needs a new run name",
                )
            require_running(existing)
            run = existing
        else:
            try:
                run, _created = ingest.open_run(
                    campaign, run_id=run_id, variant=item, kind=kind, config={}
                )
            except ingest.CampaignNotOpen as exc:
                raise MlflowError("INVALID_PARAMETER_VALUE", str(exc)) from exc
            except ingest.RunIdTaken as exc:
                raise MlflowError("RESOURCE_ALREADY_EXISTS", str(exc)) from exc
        if tags:
            try:
                run = ingest.set_tags(run, tags)
            except ingest.RunRefused as exc:
                raise refused(exc) from exc
        return {"run": shapes.run(run)}

    return once(request, f"mlflow-create:{caller.principal}", work)


@endpoint("GET")
def run_get(request: HttpRequest, caller: Caller) -> HttpResponse:
    return answer({"run": shapes.run(run_of(caller, read_body(request)))})


def _hours(run: Run, end_ms: Any) -> Decimal | None:
    """Observed hours from the run's start to MLflow's end_time (now when not sent)."""
    if run.observed_hours is not None:
        return None
    end = timezone.now()
    if isinstance(end_ms, int | str) and str(end_ms).isdigit():
        end = datetime.fromtimestamp(int(end_ms) / 1000, tz=UTC)
    seconds = max((end - run.created_at).total_seconds(), 0.0)
    return min(Decimal(seconds / 3600).quantize(Decimal("0.01")), HOURS_MAX)


@endpoint("POST")
def run_update(request: HttpRequest, caller: Caller) -> HttpResponse:
    """FINISHED → completed, FAILED/KILLED → failed; a stopped run stays stopped (its hours
    are still recorded)."""

    def work(run: Run, data: dict[str, Any]) -> dict[str, Any]:
        status = {"FINISHED": RunStatus.COMPLETED, "FAILED": RunStatus.FAILED}.get(
            str(data.get("status") or ""), RunStatus.FAILED
        )
        if data.get("status") in (None, "", "RUNNING", "SCHEDULED"):
            return {"run_info": shapes.run_info(run)}
        try:
            run = ingest.finish_run(
                run, status=status, observed_hours=_hours(run, data.get("end_time"))
            )
        except ingest.RunRefused as exc:
            raise MlflowError("INVALID_STATE", str(exc)) from exc
        return {"run_info": shapes.run_info(run)}

    return run_post(request, caller, work)
