"""Logging into a run: metrics, batches, params, tags, inputs/outputs, and the metric history.
Every write goes through campaigns/services/ingest.py, so stop rules, NaN handling, batch
limits and locking are the ones /api/v1/ applies."""

from __future__ import annotations

import json
from typing import Any

from django.http import HttpRequest, HttpResponse

from campaigns.models import (
    MetricPoint,
    Run,
    RunStatus,
)
from campaigns.services import ingest
from mlflow_api import shapes
from mlflow_api.auth import Caller
from mlflow_api.errors import MlflowError
from mlflow_api.views.lookups import (
    refused,
    require_running,
    run_of,
)
from mlflow_api.views.retries import run_post
from mlflow_api.views.wire import (
    MAX_PARAM_VALUE,
    MAX_TAG_VALUE,
    answer,
    endpoint,
    key_values,
    read_body,
    text_field,
)


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
    require_running(run)
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
        raise refused(exc) from exc
    return {}


@endpoint("POST")
def log_metric(request: HttpRequest, caller: Caller) -> HttpResponse:
    return run_post(
        request,
        caller,
        lambda run, data: _log(
            run,
            points=metric_points([{k: data.get(k) for k in ("key", "value", "step") if k in data}]),
        ),
    )


@endpoint("POST")
def log_batch(request: HttpRequest, caller: Caller) -> HttpResponse:
    def work(run: Run, data: dict[str, Any]) -> dict[str, Any]:
        points = metric_points(data.get("metrics") or [])
        params = key_values(data.get("params"), "params", MAX_PARAM_VALUE)
        tags = key_values(data.get("tags"), "tags", MAX_TAG_VALUE)
        return _log(run, params=params, tags=tags, points=points)

    return run_post(request, caller, work)


@endpoint("POST")
def log_param(request: HttpRequest, caller: Caller) -> HttpResponse:
    return run_post(
        request,
        caller,
        lambda run, data: _log(
            run,
            params={text_field(data, "key"): text_field(data, "value", required=False, limit=6000)},
        ),
    )


@endpoint("POST")
def set_tag(request: HttpRequest, caller: Caller) -> HttpResponse:
    return run_post(
        request,
        caller,
        lambda run, data: _log(
            run,
            tags={
                text_field(data, "key"): text_field(
                    data, "value", required=False, limit=MAX_TAG_VALUE
                )
            },
        ),
    )


@endpoint("POST")
def delete_tag(request: HttpRequest, caller: Caller) -> HttpResponse:
    return run_post(
        request, caller, lambda run, data: _log(run, delete_tags=(text_field(data, "key"),))
    )


def _accept_only(run: Run, data: dict[str, Any]) -> dict[str, Any]:
    """Autolog's inputs and outputs: answered in shape, not kept (the datasets and models are
    MLflow's own bookkeeping); a stopped run still refuses them, like any logging call."""
    require_running(run)
    return {}


@endpoint("POST")
def log_inputs(request: HttpRequest, caller: Caller) -> HttpResponse:
    return run_post(request, caller, _accept_only)


@endpoint("POST")
def log_outputs(request: HttpRequest, caller: Caller) -> HttpResponse:
    return run_post(request, caller, _accept_only)


@endpoint("POST")
def log_model(request: HttpRequest, caller: Caller) -> HttpResponse:
    return run_post(request, caller, _accept_only)


@endpoint("GET")
def metric_history(request: HttpRequest, caller: Caller) -> HttpResponse:
    data = read_body(request)
    run = run_of(caller, data)
    name = text_field(data, "metric_key")
    points = MetricPoint.objects.filter(run=run, name=name).order_by("step", "id")[:100_000]
    return answer({"metrics": [shapes.metric(p) for p in points]})


def metric_points(metrics: Any) -> list[ingest.Point]:
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
