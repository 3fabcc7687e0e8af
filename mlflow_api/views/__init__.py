"""MLflow's tracking REST API (the part training code calls) on top of campaigns.

Plain Django views, not DRF: the wire format is MLflow's (its paths, its request bodies, its
`{"error_code", "message"}` errors), not this project's API, and it stays out of the OpenAPI
schema. Every run write goes through campaigns/services/ingest.py, so stop rules, NaN handling,
batch
limits and locking are the ones /api/v1/ applies. The mapping is in docs/mlflow.md.

Retries: MLflow's client retries POSTs on 429/5xx and sends no idempotency key. Each POST that
names a run (or, for runs/create and logged-models, the caller) is compared with the previous
accepted POST of that scope: the same method, path and body within IDEMPOTENCY_RETENTION_HOURS
is answered from the stored response and records nothing again. The scope's record row is
locked for the request, so a retry racing its original waits for it and then replays it.
"""

from __future__ import annotations

import hashlib
import json
import logging
import posixpath
import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

import orjson
from django.conf import settings
from django.core.files import File
from django.core.files.storage import default_storage
from django.db import IntegrityError, transaction
from django.http import FileResponse, HttpRequest, HttpResponse, HttpResponseBase
from django.utils import timezone
from django.views.decorators.csrf import csrf_exempt

from campaigns.api.serializers import run_id_is_valid
from campaigns.models import (
    Campaign,
    IdempotencyRecord,
    ItemStatus,
    MetricPoint,
    PlannedItem,
    Run,
    RunArtifact,
    RunKind,
    RunStatus,
)
from campaigns.services import ingest
from campaigns.services.artifact_quota import ArtifactQuotaExceeded
from mlflow_api import services, shapes, uploads
from mlflow_api.auth import Caller, authenticate
from mlflow_api.errors import MlflowError
from mlflow_api.models import LoggedModel, LoggedModelStatus

log = logging.getLogger(__name__)

JSON = "application/json"
PREVIOUS = "mlflow:previous-post"
MAX_KEY = 250
MAX_PARAM_VALUE = 6000
MAX_TAG_VALUE = 8000
HOURS_MAX = Decimal("9999999.99")
ARTIFACT_CHUNK = 1024 * 1024

Handler = Callable[..., HttpResponseBase]


def _answer(body: Any, status: int = 200) -> HttpResponse:
    return HttpResponse(orjson.dumps(body), status=status, content_type=JSON)


def _error(exc: MlflowError) -> HttpResponse:
    return _answer(exc.body(), exc.status)


def endpoint(*methods: str) -> Callable[[Handler], Handler]:
    """Authenticate, allow `methods`, and turn MlflowError into MLflow's error shape."""

    def wrap(view: Handler) -> Handler:
        def handle(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
            if request.method not in methods:
                return _error(
                    MlflowError(
                        "ENDPOINT_NOT_FOUND", f"{request.method} is not served here", status=405
                    )
                )
            try:
                caller = authenticate(request)
                return view(request, caller, *args, **kwargs)
            except MlflowError as exc:
                return _error(exc)

        handle.__name__ = view.__name__
        handle.__doc__ = view.__doc__
        return csrf_exempt(handle)

    return wrap


@csrf_exempt
def not_found(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
    return _error(
        MlflowError(
            "ENDPOINT_NOT_FOUND",
            f"{request.method} {request.path} is not part of Campaign Desk's MLflow API "
            "(docs/mlflow.md lists what is)",
        )
    )


# --- Request bodies -------------------------------------------------------------------------


def _body(request: HttpRequest) -> dict[str, Any]:
    if request.method == "GET":
        return {k: request.GET.get(k) for k in request.GET}
    raw = request.body
    if not raw:
        return {}
    try:
        data = orjson.loads(raw)
    except orjson.JSONDecodeError:
        # Python's json module writes NaN/Infinity as bare tokens; orjson refuses them.
        try:
            data = json.loads(raw)
        except (ValueError, RecursionError) as exc:
            raise MlflowError("INVALID_PARAMETER_VALUE", f"the body is not JSON: {exc}") from exc
    if not isinstance(data, dict):
        raise MlflowError("INVALID_PARAMETER_VALUE", "the body is a JSON object")
    return data


def _text(data: dict[str, Any], field: str, *, required: bool = True, limit: int = MAX_KEY) -> str:
    value = data.get(field)
    if value is None or value == "":
        if required:
            raise MlflowError("INVALID_PARAMETER_VALUE", f"missing value for parameter '{field}'")
        return ""
    if not isinstance(value, str | int | float) or isinstance(value, bool):
        raise MlflowError("INVALID_PARAMETER_VALUE", f"parameter '{field}' is a string")
    text = str(value)
    if len(text) > limit or "\x00" in text:
        raise MlflowError(
            "INVALID_PARAMETER_VALUE", f"parameter '{field}' has at most {limit} characters"
        )
    return text


def _key_values(items: Any, field: str, value_limit: int) -> dict[str, str]:
    """MLflow's `[{"key", "value"}, ...]` as a dict (a later key wins, as in MLflow)."""
    if items is None:
        return {}
    if not isinstance(items, list):
        raise MlflowError("INVALID_PARAMETER_VALUE", f"'{field}' is a list of {{key, value}}")
    out: dict[str, str] = {}
    for item in items:
        if not isinstance(item, dict):
            raise MlflowError("INVALID_PARAMETER_VALUE", f"'{field}' is a list of {{key, value}}")
        key = _text(item, "key")
        value = item.get("value")
        out[key] = "" if value is None else _text(item, "value", required=False, limit=value_limit)
    return out


def _points(metrics: Any) -> list[ingest.Point]:
    """MLflow metrics `[{"key", "value", "timestamp", "step"}]` checked by the same rules and
    limits as /api/v1/'s metric batches (campaigns/services/ingest.py check_points)."""
    if not isinstance(metrics, list):
        raise MlflowError("INVALID_PARAMETER_VALUE", "'metrics' is a list")
    items = []
    for m in metrics:
        if not isinstance(m, dict):
            raise MlflowError("INVALID_PARAMETER_VALUE", "a metric is {key, value, step}")
        step = m.get("step", 0)
        # proto3 JSON may write int64 as a string.
        if isinstance(step, str) and step.isdigit():
            step = int(step)
        items.append({"name": m.get("key"), "step": step, "value": m.get("value")})
    try:
        return ingest.check_points(items)
    except ingest.BatchRefused as exc:
        raise MlflowError(
            "INVALID_PARAMETER_VALUE",
            f"metrics refused: {json.dumps(exc.body)}",
            status=400 if exc.status != 413 else 413,
        ) from exc


# --- Lookups --------------------------------------------------------------------------------


def _campaign(caller: Caller, experiment_id: Any) -> Campaign:
    text = str(experiment_id or "")
    campaign = caller.campaigns().filter(pk=int(text)).first() if text.isdigit() else None
    if campaign is None:
        raise MlflowError(
            "RESOURCE_DOES_NOT_EXIST", f"no experiment with id {text!r} (a campaign id)"
        )
    return campaign


def _campaign_by_name(caller: Caller, name: str) -> Campaign:
    """With an ingest key every name is its campaign; a user names a campaign by id or title."""
    if caller.key is not None:
        return caller.key.campaign
    campaigns = caller.campaigns()
    found = campaigns.filter(pk=int(name)).first() if name.isdigit() else None
    if found is None:
        matches = list(campaigns.filter(title=name)[:2])
        if len(matches) == 1:
            found = matches[0]
        elif matches:
            raise MlflowError(
                "INVALID_PARAMETER_VALUE",
                f"several of your campaigns are titled {name!r}: name one by its id",
            )
    if found is None:
        raise MlflowError(
            "RESOURCE_DOES_NOT_EXIST",
            f"no campaign of yours has the id or title {name!r}; experiments are campaigns, "
            "created in Campaign Desk",
        )
    return found


def _run(caller: Caller, data: dict[str, Any]) -> Run:
    run_id = data.get("run_id") or data.get("run_uuid")
    run = (
        caller.runs().filter(run_id=run_id).select_related("campaign").first()
        if isinstance(run_id, str)
        else None
    )
    if run is None:
        raise MlflowError("RESOURCE_DOES_NOT_EXIST", f"run {run_id!r} not found")
    return run


def _stopped(run: Run) -> MlflowError:
    by = f"rule #{run.stop_rule_id}" if run.stop_rule_id else "hand"
    return MlflowError("INVALID_STATE", f"run {run.run_id} was stopped by {by}: {run.stop_reason}")


def _refused(exc: ingest.RunRefused) -> MlflowError:
    if exc.run.status == RunStatus.STOPPED:
        return _stopped(exc.run)
    return MlflowError("INVALID_STATE", str(exc))


def _require_running(run: Run) -> None:
    if run.status == RunStatus.STOPPED:
        raise _stopped(run)
    if run.status != RunStatus.RUNNING:
        raise MlflowError("INVALID_STATE", f"run {run.run_id} is finished ({run.status})")


# --- Harmless retries -----------------------------------------------------------------------


def _locked_record(scope: str, request: HttpRequest) -> IdempotencyRecord:
    """The scope's record of its previous accepted POST, locked for this request (created
    empty the first time; a concurrent creator waits on the unique index, then locks it)."""
    record = IdempotencyRecord.objects.select_for_update().filter(principal=scope, key=PREVIOUS)
    found = record.first()
    if found is not None:
        return found
    try:
        with transaction.atomic():
            return IdempotencyRecord.objects.create(
                principal=scope,
                key=PREVIOUS,
                method=request.method or "POST",
                path=request.path[:500],
                body_digest="",
            )
    except IntegrityError:
        return record.get()


def _once(request: HttpRequest, scope: str, work: Callable[[], Any]) -> HttpResponse:
    """Run `work` (all or nothing) unless this POST repeats the scope's previous accepted one."""
    digest = hashlib.sha256(
        f"{request.method} {request.path}\n".encode() + request.body
    ).hexdigest()
    cutoff = timezone.now() - timedelta(hours=settings.IDEMPOTENCY_RETENTION_HOURS)
    with transaction.atomic():
        record = _locked_record(scope, request)
        if (
            record.body_digest == digest
            and record.status_code is not None
            and record.created_at >= cutoff
        ):
            response = HttpResponse(
                bytes(record.response_body or b""),
                status=record.status_code,
                content_type=record.content_type or JSON,
            )
            response["Idempotent-Replayed"] = "true"
            return response
        try:
            # No savepoint (two round trips saved per call): a refusal rolls the whole
            # transaction back on the way out, the record's previous answer included.
            with transaction.atomic(savepoint=False):
                body = work()
        except MlflowError as exc:
            return _error(exc)
        content = orjson.dumps(body)
        IdempotencyRecord.objects.filter(pk=record.pk).update(
            method=request.method or "POST",
            path=request.path[:500],
            body_digest=digest,
            status_code=200,
            response_body=content,
            content_type=JSON,
            created_at=timezone.now(),
        )
    return HttpResponse(content, status=200, content_type=JSON)


def _run_post(
    request: HttpRequest, caller: Caller, work: Callable[[Run, dict[str, Any]], Any]
) -> HttpResponse:
    data = _body(request)
    run = _run(caller, data)
    caller.require_write(run.team_id)
    return _once(request, f"mlflow-run:{run.pk}", lambda: work(run, data))


# --- Server info ----------------------------------------------------------------------------


@endpoint("GET")
def server_info(request: HttpRequest, caller: Caller) -> HttpResponse:
    """What the client asks before large uploads: no multipart, files go in one PUT."""
    return _answer(
        {
            "store_type": "CampaignDesk",
            "workspaces_enabled": False,
            "multipart_uploads_enabled": False,
            "multipart_downloads_enabled": False,
            "artifact_max_bytes": settings.ARTIFACT_MAX_BYTES,
        }
    )


# --- Experiments (campaigns) ----------------------------------------------------------------


@endpoint("GET")
def experiment_by_name(request: HttpRequest, caller: Caller) -> HttpResponse:
    name = _text(_body(request), "experiment_name", limit=500)
    return _answer({"experiment": shapes.experiment(_campaign_by_name(caller, name))})


@endpoint("GET")
def experiment_get(request: HttpRequest, caller: Caller) -> HttpResponse:
    campaign = _campaign(caller, _body(request).get("experiment_id"))
    return _answer({"experiment": shapes.experiment(campaign)})


@endpoint("POST")
def experiment_create(request: HttpRequest, caller: Caller) -> HttpResponse:
    """Campaigns are created in Campaign Desk; this answers the id the name resolves to."""
    name = _text(_body(request), "name", limit=500)
    return _answer({"experiment_id": str(_campaign_by_name(caller, name).pk)})


@endpoint("POST")
def experiment_search(request: HttpRequest, caller: Caller) -> HttpResponse:
    campaigns = caller.campaigns().order_by("-created_at", "-id")[:1000]
    return _answer({"experiments": [shapes.experiment(c) for c in campaigns]})


# --- Runs -----------------------------------------------------------------------------------


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
    data = _body(request)
    campaign = _campaign(caller, data.get("experiment_id"))
    caller.require_write(campaign.team_id)
    tags = _key_values(data.get("tags"), "tags", MAX_TAG_VALUE)
    if data.get("user_id") and "mlflow.user" not in tags:
        tags["mlflow.user"] = _text(data, "user_id")
    item = _item(caller, campaign, tags)
    kind = _kind(caller, tags)
    run_id = _text(data, "run_name", required=False) or tags.get("mlflow.runName") or ""
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
            _require_running(existing)
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
                raise _refused(exc) from exc
        return {"run": shapes.run(run)}

    return _once(request, f"mlflow-create:{caller.principal}", work)


@endpoint("GET")
def run_get(request: HttpRequest, caller: Caller) -> HttpResponse:
    return _answer({"run": shapes.run(_run(caller, _body(request)))})


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

    return _run_post(request, caller, work)


def _log(
    run: Run,
    *,
    params: dict[str, str] | None = None,
    tags: dict[str, str] | None = None,
    points: list[ingest.Point] | None = None,
    delete_tags: tuple[str, ...] = (),
) -> dict[str, Any]:
    """Params, then tags, then metrics, in the caller's transaction: a batch is all or
    nothing, and the metrics that fire a rule come last (the firing batch is still stored)."""
    _require_running(run)
    try:
        if params:
            run = ingest.add_params(run, params)
        if tags or delete_tags:
            run = ingest.set_tags(run, tags or {}, delete=delete_tags)
        if points:
            ingest.append_metrics(run, points)
    except ingest.RunRefused as exc:
        if exc.run.status == RunStatus.RUNNING:
            raise MlflowError("INVALID_PARAMETER_VALUE", str(exc)) from exc
        raise _refused(exc) from exc
    return {}


@endpoint("POST")
def log_metric(request: HttpRequest, caller: Caller) -> HttpResponse:
    return _run_post(
        request,
        caller,
        lambda run, data: _log(
            run,
            points=_points([{k: data.get(k) for k in ("key", "value", "step") if k in data}]),
        ),
    )


@endpoint("POST")
def log_batch(request: HttpRequest, caller: Caller) -> HttpResponse:
    def work(run: Run, data: dict[str, Any]) -> dict[str, Any]:
        points = _points(data.get("metrics") or [])
        params = _key_values(data.get("params"), "params", MAX_PARAM_VALUE)
        tags = _key_values(data.get("tags"), "tags", MAX_TAG_VALUE)
        return _log(run, params=params, tags=tags, points=points)

    return _run_post(request, caller, work)


@endpoint("POST")
def log_param(request: HttpRequest, caller: Caller) -> HttpResponse:
    return _run_post(
        request,
        caller,
        lambda run, data: _log(
            run,
            params={_text(data, "key"): _text(data, "value", required=False, limit=6000)},
        ),
    )


@endpoint("POST")
def set_tag(request: HttpRequest, caller: Caller) -> HttpResponse:
    return _run_post(
        request,
        caller,
        lambda run, data: _log(
            run,
            tags={_text(data, "key"): _text(data, "value", required=False, limit=MAX_TAG_VALUE)},
        ),
    )


@endpoint("POST")
def delete_tag(request: HttpRequest, caller: Caller) -> HttpResponse:
    return _run_post(
        request, caller, lambda run, data: _log(run, delete_tags=(_text(data, "key"),))
    )


def _accept_only(run: Run, data: dict[str, Any]) -> dict[str, Any]:
    """Autolog's inputs and outputs: answered in shape, not kept (the datasets and models are
    MLflow's own bookkeeping); a stopped run still refuses them, like any logging call."""
    _require_running(run)
    return {}


@endpoint("POST")
def log_inputs(request: HttpRequest, caller: Caller) -> HttpResponse:
    return _run_post(request, caller, _accept_only)


@endpoint("POST")
def log_outputs(request: HttpRequest, caller: Caller) -> HttpResponse:
    return _run_post(request, caller, _accept_only)


@endpoint("POST")
def log_model(request: HttpRequest, caller: Caller) -> HttpResponse:
    return _run_post(request, caller, _accept_only)


@endpoint("GET")
def metric_history(request: HttpRequest, caller: Caller) -> HttpResponse:
    data = _body(request)
    run = _run(caller, data)
    name = _text(data, "metric_key")
    points = MetricPoint.objects.filter(run=run, name=name).order_by("step", "id")[:100_000]
    return _answer({"metrics": [shapes.metric(p) for p in points]})


# --- Logged models (MLflow 3, autolog) ------------------------------------------------------


def _model(caller: Caller, model_id: str) -> LoggedModel:
    model = (
        LoggedModel.objects.filter(model_id=model_id, campaign__in=caller.campaigns())
        .select_related("source_run")
        .first()
    )
    if model is None:
        raise MlflowError("RESOURCE_DOES_NOT_EXIST", f"logged model {model_id!r} not found")
    return model


def _model_json(model: LoggedModel) -> dict[str, Any]:
    run = model.source_run
    return shapes.logged_model(model, run.run_id if run is not None else None)


@endpoint("POST")
def logged_models(request: HttpRequest, caller: Caller) -> HttpResponse:
    data = _body(request)
    campaign = _campaign(caller, data.get("experiment_id"))
    caller.require_write(campaign.team_id)
    source = None
    if data.get("source_run_id"):
        source = _run(caller, {"run_id": data["source_run_id"]})
        if source.campaign_id != campaign.pk:
            raise MlflowError("INVALID_PARAMETER_VALUE", "the source run is in another campaign")

    def work() -> dict[str, Any]:
        model = services.create_logged_model(
            campaign=campaign,
            name=_text(data, "name", required=False),
            model_type=_text(data, "model_type", required=False),
            source_run=source,
            tags=_key_values(data.get("tags"), "tags", MAX_TAG_VALUE),
            params=_key_values(data.get("params"), "params", MAX_PARAM_VALUE),
        )
        return {"model": _model_json(model)}

    return _once(request, f"mlflow-create:{caller.principal}", work)


@endpoint("POST")
def logged_models_search(request: HttpRequest, caller: Caller) -> HttpResponse:
    data = _body(request)
    ids = [str(i) for i in data.get("experiment_ids") or [] if str(i).isdigit()]
    models = LoggedModel.objects.filter(campaign__in=caller.campaigns(), campaign_id__in=ids)
    return _answer({"models": [_model_json(m) for m in models.select_related("source_run")[:1000]]})


@endpoint("GET", "PATCH", "DELETE")
def logged_model(request: HttpRequest, caller: Caller, model_id: str) -> HttpResponse:
    model = _model(caller, model_id)
    if request.method == "GET":
        return _answer({"model": _model_json(model)})
    caller.require_write(model.campaign.team_id)
    if request.method == "DELETE":
        raise MlflowError("INVALID_STATE", "logged models are kept with their campaign")
    status = _body(request).get("status")
    if status not in LoggedModelStatus.values:
        raise MlflowError(
            "INVALID_PARAMETER_VALUE", f"status is one of {', '.join(LoggedModelStatus.values)}"
        )
    model = services.update_logged_model(model, status=status)
    return _answer({"model": _model_json(model)})


@endpoint("PATCH")
def logged_model_tags(request: HttpRequest, caller: Caller, model_id: str) -> HttpResponse:
    model = _model(caller, model_id)
    caller.require_write(model.campaign.team_id)
    tags = _key_values(_body(request).get("tags"), "tags", MAX_TAG_VALUE)
    services.update_logged_model(model, tags=tags)
    return _answer({})


@endpoint("DELETE")
def logged_model_tag(request: HttpRequest, caller: Caller, model_id: str, key: str) -> HttpResponse:
    model = _model(caller, model_id)
    caller.require_write(model.campaign.team_id)
    services.update_logged_model(model, delete_tags=(key,))
    return _answer({})


@endpoint("POST")
def logged_model_params(request: HttpRequest, caller: Caller, model_id: str) -> HttpResponse:
    model = _model(caller, model_id)
    caller.require_write(model.campaign.team_id)
    params = _key_values(_body(request).get("params"), "params", MAX_PARAM_VALUE)
    services.update_logged_model(model, params=params)
    return _answer({})


# --- Artifacts ------------------------------------------------------------------------------


def _safe(path: str) -> str:
    clean = posixpath.normpath(path.strip("/")) if path.strip("/") else ""
    parts = clean.split("/") if clean else []
    if (
        not parts
        or any(p in ("", ".", "..") for p in parts)
        or "\\" in clean
        or "\x00" in clean
        or len(clean) > 500
    ):
        raise MlflowError("INVALID_PARAMETER_VALUE", f"artifact path {path!r} is not allowed")
    return clean


def _artifact_target(caller: Caller, path: str) -> tuple[Run, str]:
    """`<experiment>/<run_id>/artifacts/<path>` → (run, path); a logged model's
    `<experiment>/models/<model_id>/artifacts/<path>` → (its source run, models/<id>/<path>)."""
    parts = path.split("/")
    campaign = _campaign(caller, parts[0] if parts else "")
    if len(parts) >= 4 and parts[1] == "models" and parts[3] == "artifacts":
        model = LoggedModel.objects.filter(model_id=parts[2], campaign=campaign).first()
        if model is not None:
            if model.source_run is None:
                raise MlflowError(
                    "INVALID_PARAMETER_VALUE",
                    "a logged model without a source run has nowhere to keep its files",
                )
            rest = "/".join(parts[4:])
            return model.source_run, f"models/{model.model_id}" + (f"/{rest}" if rest else "")
    if len(parts) < 3 or parts[2] != "artifacts":
        raise MlflowError("RESOURCE_DOES_NOT_EXIST", f"no artifact root in {path!r}")
    run = caller.runs().filter(campaign=campaign, run_id=parts[1]).first()
    if run is None:
        raise MlflowError("RESOURCE_DOES_NOT_EXIST", f"run {parts[1]!r} not found")
    return run, "/".join(parts[3:])


class _TooLarge(Exception):
    pass


class _HashingReader:
    """Reads the request body for the storage, hashing and counting as it goes."""

    def __init__(self, stream: Any, limit: int) -> None:
        self.stream = stream
        self.limit = limit
        self.size = 0
        self.sha256 = hashlib.sha256()

    def read(self, size: int = -1) -> bytes:
        data: bytes = self.stream.read(size if size and size > 0 else ARTIFACT_CHUNK)
        self.size += len(data)
        if self.size > self.limit:
            raise _TooLarge
        self.sha256.update(data)
        return data


def _too_large() -> MlflowError:
    return MlflowError(
        "RESOURCE_EXHAUSTED",
        f"an artifact holds at most {settings.ARTIFACT_MAX_BYTES} bytes (ARTIFACT_MAX_BYTES)",
        status=413,
    )


@endpoint("GET", "PUT")
def artifact(request: HttpRequest, caller: Caller, path: str) -> HttpResponseBase:
    run, relative = _artifact_target(caller, path)
    if request.method == "GET":
        stored = RunArtifact.objects.filter(run=run, path=relative).first()
        if stored is None:
            raise MlflowError("RESOURCE_DOES_NOT_EXIST", f"no artifact {relative!r}")
        return FileResponse(
            default_storage.open(stored.storage_name, "rb"),
            content_type=stored.content_type or "application/octet-stream",
        )
    caller.require_write(run.team_id)
    relative = _safe(relative)
    # 411 without Content-Length, 413 over ARTIFACT_MAX_BYTES or a quota (mlflow_api/uploads).
    uploads.refuse_before_reading(request, run, relative)
    # A fresh name per upload: the file it replaces is deleted only once the new row commits.
    name = f"mlflow-artifacts/{run.campaign_id}/{run.pk}/{uuid.uuid4().hex}/" + posixpath.basename(
        relative
    )
    reader = _HashingReader(uploads.deadline_stream(request), settings.ARTIFACT_MAX_BYTES)
    try:
        upload = File(reader, name=posixpath.basename(relative))  # type: ignore[arg-type]
        saved = default_storage.save(name, upload)
    except _TooLarge:
        default_storage.delete(name)
        raise _too_large() from None
    except BaseException as exc:
        # A client gone, too slow (ARTIFACT_UPLOAD_SECONDS) or a worker timeout: no partial file.
        default_storage.delete(name)
        if isinstance(exc, uploads.UploadTooSlow):
            raise MlflowError("INVALID_PARAMETER_VALUE", str(exc), status=408) from None
        raise
    try:
        _artifact, replaced = ingest.record_artifact(
            run,
            path=relative,
            size_bytes=reader.size,
            sha256=reader.sha256.hexdigest(),
            storage_name=saved,
            content_type=(request.content_type or "")[:200],
        )
    except ArtifactQuotaExceeded as exc:
        default_storage.delete(saved)
        raise uploads.quota_error(exc) from None
    except Exception:
        default_storage.delete(saved)
        raise
    if replaced:
        transaction.on_commit(lambda: default_storage.delete(replaced))
    return _answer({})


@endpoint("GET")
def artifact_list(request: HttpRequest, caller: Caller) -> HttpResponse:
    """`?path=<experiment>/<run_id>/artifacts[/dir]` → the directory's entries."""
    path = (request.GET.get("path") or "").strip("/")
    run, relative = _artifact_target(caller, path)
    prefix = f"{relative.strip('/')}/" if relative.strip("/") else ""
    entries: dict[str, dict[str, Any]] = {}
    for stored in RunArtifact.objects.filter(run=run, path__startswith=prefix):
        head, _, rest = stored.path[len(prefix) :].partition("/")
        if rest:
            entries.setdefault(head, {"path": head, "is_dir": True})
        else:
            entries[head] = {"path": head, "is_dir": False, "file_size": stored.size_bytes}
    return _answer({"files": [entries[k] for k in sorted(entries)]})
