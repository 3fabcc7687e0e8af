"""Logging into a run: metrics, batches, params, tags, dataset inputs, and the metric history.

Every write goes through campaigns/services/run_log.py (one lock, one save; stop rules, NaN
handling and batch limits are the ones /api/v1/ applies). MLflow's client sends no request id,
so a retry is recognised by its content (campaigns/services/run_log.py): a point is stored once
per (key, step, timestamp, value), params and tags are idempotent by value.
"""

from __future__ import annotations

import json
import re
from typing import Any

import orjson
from django.http import HttpRequest, HttpResponse

from campaigns.models import Run
from campaigns.selectors import run_metrics as readings
from campaigns.services import ingest, metric_batch, run_log
from mlflow_api import shapes
from mlflow_api.auth import Caller
from mlflow_api.errors import MlflowError
from mlflow_api.views.lookups import refusal, run_of, write_scope
from mlflow_api.views.wire import (
    MAX_KEY,
    MAX_PARAM_VALUE,
    MAX_TAG_VALUE,
    RUN_NAME_TAG,
    answer,
    checked_run_name,
    endpoint,
    key_values,
    read_body,
    text_field,
)

# MLflow's step is an int64 and may be negative.
STEP_MIN = -(2**63)
MODEL_ID = re.compile(r"[A-Za-z0-9._-]{1,40}")
MAX_INPUTS = 1000
MAX_INPUT_BYTES = 64 * 1024
HISTORY_MAX = 100_000


def _write(caller: Caller, data: dict[str, Any], **parts: Any) -> HttpResponse:
    runs, run_id = write_scope(caller, data)
    try:
        run_log.log_to_run(runs, run_id, **parts)
    except Run.DoesNotExist as exc:
        raise MlflowError("RESOURCE_DOES_NOT_EXIST", f"run {run_id!r} not found") from exc
    except ingest.RunRefused as exc:
        raise refusal(exc) from exc
    return answer({})


@endpoint("POST")
def log_metric(request: HttpRequest, caller: Caller) -> HttpResponse:
    data = read_body(request)
    metric = {k: data[k] for k in ("key", "value", "step", "timestamp", "model_id") if k in data}
    return _write(caller, data, points=metric_points([metric]))


@endpoint("POST")
def log_batch(request: HttpRequest, caller: Caller) -> HttpResponse:
    data = read_body(request)
    return _write(
        caller,
        data,
        points=metric_points(data.get("metrics") or []),
        params=key_values(data.get("params"), "params", MAX_PARAM_VALUE),
        tags=key_values(data.get("tags"), "tags", MAX_TAG_VALUE),
    )


@endpoint("POST")
def log_param(request: HttpRequest, caller: Caller) -> HttpResponse:
    data = read_body(request)
    value = text_field(data, "value", required=False, limit=MAX_PARAM_VALUE)
    return _write(caller, data, params={text_field(data, "key"): value})


@endpoint("POST")
def set_tag(request: HttpRequest, caller: Caller) -> HttpResponse:
    data = read_body(request)
    value = text_field(data, "value", required=False, limit=MAX_TAG_VALUE)
    key = text_field(data, "key")
    if key == RUN_NAME_TAG:
        checked_run_name(value, "value")
    return _write(caller, data, tags={key: value})


@endpoint("POST")
def delete_tag(request: HttpRequest, caller: Caller) -> HttpResponse:
    data = read_body(request)
    return _write(caller, data, delete_tags=(text_field(data, "key"),))


@endpoint("POST")
def log_inputs(request: HttpRequest, caller: Caller) -> HttpResponse:
    """Dataset inputs are kept on the run (shown on its page and in runs/get); model inputs
    are MLflow's own bookkeeping and only answered."""
    data = read_body(request)
    return _write(caller, data, inputs=dataset_inputs(data.get("datasets")))


@endpoint("POST")
def log_outputs(request: HttpRequest, caller: Caller) -> HttpResponse:
    """Model outputs of a run: answered (the logged model names its source run already); a
    stopped or finished run refuses them, like any logging call."""
    return _write(caller, read_body(request))


@endpoint("POST")
def log_model(request: HttpRequest, caller: Caller) -> HttpResponse:
    return _write(caller, read_body(request))


@endpoint("GET")
def metric_history(request: HttpRequest, caller: Caller) -> HttpResponse:
    data = read_body(request)
    run = run_of(caller, data)
    name = text_field(data, "metric_key")
    # Paged like MLflow's (max_results, page_token; issue 21): a page costs what it holds.
    limit = _max_results(data.get("max_results"))
    points, following = readings.history_page(
        run, name, limit=limit, after=_cursor(data.get("page_token"))
    )
    body: dict[str, Any] = {"metrics": [shapes.metric(p, run.run_id) for p in points]}
    if following is not None:
        body["next_page_token"] = f"{following[0]}:{following[1]}"
    return answer(body)


def _max_results(raw: Any) -> int:
    if raw is None or raw == "":
        return HISTORY_MAX
    if isinstance(raw, str) and re.fullmatch(r"\d{1,9}", raw):
        raw = int(raw)
    if type(raw) is not int or not 1 <= raw <= HISTORY_MAX:
        raise MlflowError(
            "INVALID_PARAMETER_VALUE", f"max_results is an integer from 1 to {HISTORY_MAX}"
        )
    return raw


def _cursor(raw: Any) -> tuple[int, int] | None:
    if raw is None or raw == "":
        return None
    found = re.fullmatch(r"(-?\d{1,19}):(\d{1,19})", raw) if isinstance(raw, str) else None
    if found is None:
        raise MlflowError("INVALID_PARAMETER_VALUE", "page_token is not one this server gave")
    return int(found[1]), int(found[2])


def _metric_item(m: Any) -> dict[str, Any]:
    if not isinstance(m, dict):
        raise MlflowError("INVALID_PARAMETER_VALUE", "a metric is {key, value, timestamp, step}")
    step = m.get("step", 0)
    # proto3 JSON may write int64 as a string.
    if isinstance(step, str) and re.fullmatch(r"-?\d{1,19}", step):
        step = int(step)
    return {"name": m.get("key"), "step": step, "value": m.get("value")}


def _timestamp(m: dict[str, Any]) -> int | None:
    stamp = m.get("timestamp")
    if stamp is None or stamp == "":
        return None
    if isinstance(stamp, str) and re.fullmatch(r"-?\d{1,19}", stamp):
        stamp = int(stamp)
    if type(stamp) is not int or not STEP_MIN <= stamp < 2**63:
        raise MlflowError(
            "INVALID_PARAMETER_VALUE", "a metric's timestamp is milliseconds since 1970"
        )
    return stamp


def _model_id(m: dict[str, Any]) -> str:
    model_id = m.get("model_id") or ""
    if model_id and (not isinstance(model_id, str) or not MODEL_ID.fullmatch(model_id)):
        raise MlflowError("INVALID_PARAMETER_VALUE", f"model_id {model_id!r} is not a model id")
    return str(model_id)


def metric_points(metrics: Any) -> list[ingest.Point]:
    """MLflow metrics `[{"key", "value", "timestamp", "step", "model_id"}]` checked by the rules
    of /api/v1/'s metric batches (campaigns/services/ingest.py check_points) with MLflow's
    limits: keys up to 250 characters, any int64 step."""
    if not isinstance(metrics, list):
        raise MlflowError("INVALID_PARAMETER_VALUE", "'metrics' is a list")
    items = [_metric_item(m) for m in metrics]
    try:
        checked = metric_batch.check_points(items, max_name=MAX_KEY, min_step=STEP_MIN)
    except metric_batch.BatchRefused as exc:
        raise MlflowError(
            "INVALID_PARAMETER_VALUE",
            f"metrics refused: {json.dumps(exc.body)}",
            status=400 if exc.status != 413 else 413,
        ) from exc
    # check_points refuses the whole batch on any problem, so points and metrics align.
    return [
        p._replace(timestamp_ms=_timestamp(m), model_id=_model_id(m))
        for p, m in zip(checked, metrics, strict=True)
    ]


def dataset_inputs(datasets: Any) -> list[dict[str, Any]]:
    """`[{"dataset": {name, digest, source_type, source, schema, profile}, "tags": [...]}]`,
    each at most 64 KiB as JSON (a schema or profile beyond that is MLflow's to keep)."""
    if datasets is None:
        return []
    if not isinstance(datasets, list) or len(datasets) > MAX_INPUTS:
        raise MlflowError(
            "INVALID_PARAMETER_VALUE", f"'datasets' is a list of at most {MAX_INPUTS} inputs"
        )
    kept = []
    for item in datasets:
        dataset = item.get("dataset") if isinstance(item, dict) else None
        if not isinstance(dataset, dict) or not isinstance(dataset.get("name"), str):
            raise MlflowError("INVALID_PARAMETER_VALUE", "a dataset input is {dataset: {name}}")
        entry = {"dataset": dataset, "tags": item.get("tags") or []}
        if len(orjson.dumps(entry)) > MAX_INPUT_BYTES:
            raise MlflowError(
                "INVALID_PARAMETER_VALUE",
                f"dataset input {dataset['name']!r} is over {MAX_INPUT_BYTES} bytes as JSON",
            )
        kept.append(entry)
    return kept
