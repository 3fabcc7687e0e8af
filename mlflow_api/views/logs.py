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
from django.conf import settings
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse

from campaigns.models import Run
from campaigns.selectors import run_metrics
from campaigns.services import ingest, metric_batch, run_log
from campaigns.services.run_lock import KeyScope
from mlflow_api import shapes
from mlflow_api.auth import Caller
from mlflow_api.domain import names
from mlflow_api.errors import MlflowError
from mlflow_api.views.lookups import refusal, run_id_of, run_not_found, run_of, write_scope
from mlflow_api.views.wire import (
    MAX_KEY,
    MAX_PARAM_VALUE,
    MAX_TAG_VALUE,
    RUN_NAME_TAG,
    answer,
    checked_key,
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
    # A key's scope is its campaign, whose locking statement is compiled once per process.
    scope: QuerySet[Run] | KeyScope
    if caller.key is not None:
        scope, run_id = caller.key_scope(), run_id_of(data)
    else:
        scope, run_id = write_scope(caller, data)
    try:
        # MLFLOW_ASYNC_COMMIT: commits that need not wait for the disk (docs/mlflow.md).
        run_log.log_to_run(scope, run_id, durable=not settings.MLFLOW_ASYNC_COMMIT, **parts)
    except Run.DoesNotExist as exc:
        if caller.revoked_meanwhile():
            raise MlflowError("UNAUTHENTICATED", "unknown or revoked token", status=401) from exc
        raise run_not_found(run_id) from exc
    except ingest.RunRefused as exc:
        raise refusal(exc) from exc
    return answer({})


@endpoint("POST", remember_key=True)
def log_metric(request: HttpRequest, caller: Caller) -> HttpResponse:
    data = read_body(request)
    run_id_of(data)
    metric = {k: data[k] for k in ("key", "value", "step", "timestamp", "model_id") if k in data}
    return _write(caller, data, points=metric_points([metric], batch=False))


@endpoint("POST", remember_key=True)
def log_batch(request: HttpRequest, caller: Caller) -> HttpResponse:
    data = read_body(request)
    run_id_of(data)
    return _write(
        caller,
        data,
        points=metric_points(data.get("metrics") or []),
        params=key_values(data.get("params"), "params", MAX_PARAM_VALUE, unique=True),
        tags=key_values(data.get("tags"), "tags", MAX_TAG_VALUE),
    )


@endpoint("POST", remember_key=True)
def log_param(request: HttpRequest, caller: Caller) -> HttpResponse:
    data = read_body(request)
    run_id_of(data)
    key = checked_key(text_field(data, "key"), "key")
    value = text_field(data, "value", required=False, limit=MAX_PARAM_VALUE)
    return _write(caller, data, params={key: value})


@endpoint("POST", remember_key=True)
def set_tag(request: HttpRequest, caller: Caller) -> HttpResponse:
    data = read_body(request)
    run_id_of(data)
    key = checked_key(text_field(data, "key"), "key")
    value = text_field(data, "value", required=False, limit=MAX_TAG_VALUE)
    if key == RUN_NAME_TAG:
        checked_run_name(value, "value")
    return _write(caller, data, tags={key: value})


@endpoint("POST")
def delete_tag(request: HttpRequest, caller: Caller) -> HttpResponse:
    data = read_body(request)
    key = text_field(data, "key")
    run = run_of(caller, data)
    if run.deleted_at is None and key not in run.tags:
        raise MlflowError(
            "RESOURCE_DOES_NOT_EXIST", f"No tag with name: {key} in run with id {run.run_id}"
        )
    return _write(caller, data, delete_tags=(key,))


@endpoint("POST")
def log_inputs(request: HttpRequest, caller: Caller) -> HttpResponse:
    """Dataset inputs are kept on the run (shown on its page and in runs/get); model inputs
    are MLflow's own bookkeeping and only answered."""
    data = read_body(request)
    run_id_of(data)
    if not data.get("datasets"):
        raise MlflowError("INVALID_PARAMETER_VALUE", names.missing("datasets"))
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
    points, following = run_metrics.history_page(
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


_INT64 = re.compile(r"-?\d{1,19}")
_VALUE_TOKENS = frozenset({"NaN", "Infinity", "-Infinity", "nan", "inf", "-inf"})


def _int64(value: Any) -> int | None:
    """An int64 as proto3 JSON writes it (a number, or its text); None if it is not one."""
    if isinstance(value, str) and _INT64.fullmatch(value):
        value = int(value)
    if type(value) is int and STEP_MIN <= value < 2**63:
        return value
    return None


def _metric_item(m: Any, path: str) -> dict[str, Any]:
    """One metric checked as MLflow's server checks it (its messages, `path` naming it)."""
    if not isinstance(m, dict):
        raise MlflowError("INVALID_PARAMETER_VALUE", names.invalid(path, m))
    key = m.get("key")
    if key is None or key == "":
        raise MlflowError("INVALID_PARAMETER_VALUE", names.missing(f"{path}key"))
    if not isinstance(key, str):
        raise MlflowError("INVALID_PARAMETER_VALUE", names.invalid(f"{path}key", key))
    checked_key(key, f"{path}name")  # MLflow's server names a metric's key `name` here
    value = m.get("value")
    if value is None:
        raise MlflowError("INVALID_PARAMETER_VALUE", names.missing(f"{path}value"))
    if isinstance(value, bool) or not (
        isinstance(value, int | float) or (isinstance(value, str) and value in _VALUE_TOKENS)
    ):
        raise MlflowError("INVALID_PARAMETER_VALUE", names.invalid(f"{path}value", value))
    step = m.get("step", 0)
    step = 0 if step is None or step == "" else _int64(step)
    if step is None:
        raise MlflowError("INVALID_PARAMETER_VALUE", names.invalid(f"{path}step", m.get("step")))
    return {"name": key, "step": step, "value": value}


def _timestamp(m: dict[str, Any], path: str) -> int:
    """Required, as MLflow's server requires it: ms since 1970, not negative."""
    stamp = m.get("timestamp")
    if stamp is None or stamp == "":
        raise MlflowError("INVALID_PARAMETER_VALUE", names.missing(f"{path}timestamp"))
    found = _int64(stamp)
    if found is None or found < 0:
        raise MlflowError("INVALID_PARAMETER_VALUE", names.invalid(f"{path}timestamp", stamp))
    return found


def _model_id(m: dict[str, Any]) -> str:
    model_id = m.get("model_id") or ""
    if model_id and (not isinstance(model_id, str) or not MODEL_ID.fullmatch(model_id)):
        raise MlflowError("INVALID_PARAMETER_VALUE", f"model_id {model_id!r} is not a model id")
    return str(model_id)


def metric_points(metrics: Any, *, batch: bool = True) -> list[ingest.Point]:
    """MLflow metrics `[{"key", "value", "timestamp", "step", "model_id"}]` checked by the rules
    of /api/v1/'s metric batches (campaigns/services/ingest.py check_points) with MLflow's
    limits: keys up to 250 characters, any int64 step."""
    if not isinstance(metrics, list):
        raise MlflowError("INVALID_PARAMETER_VALUE", names.invalid("metrics", metrics))
    paths = [f"metrics[{n}]." if batch else "" for n in range(len(metrics))]
    items = [_metric_item(m, path) for m, path in zip(metrics, paths, strict=True)]
    stamps = [_timestamp(m, path) for m, path in zip(metrics, paths, strict=True)]
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
        p._replace(timestamp_ms=stamp, model_id=_model_id(m))
        for p, m, stamp in zip(checked, metrics, stamps, strict=True)
    ]


DATASET_LIMITS = {"name": 500, "digest": 36, "source_type": 64, "source": 65_535}
INPUT_TAG_LIMITS = {"key": 255, "value": 500}


def _dataset(item: Any, n: int) -> dict[str, Any]:
    """One dataset input as MLflow's server takes it: its fields are strings within MLflow's
    limits (a number as a tag, a 25-digit source type are refused), its tags {key, value}."""
    dataset = item.get("dataset") if isinstance(item, dict) else None
    if not isinstance(dataset, dict):
        raise MlflowError("INVALID_PARAMETER_VALUE", names.missing(f"datasets[{n}].dataset"))
    for field, limit in DATASET_LIMITS.items():
        text_field(dataset, field, limit=limit)
    for field in ("schema", "profile"):
        text_field(dataset, field, required=False, limit=MAX_INPUT_BYTES)
    tags = item.get("tags") or []
    if not isinstance(tags, list):
        raise MlflowError("INVALID_PARAMETER_VALUE", names.invalid(f"datasets[{n}].tags", tags))
    for tag in tags:
        if not isinstance(tag, dict):
            raise MlflowError("INVALID_PARAMETER_VALUE", names.invalid("tags", tag))
        for field, limit in INPUT_TAG_LIMITS.items():
            text_field(tag, field, limit=limit)
    return {"dataset": dataset, "tags": tags}


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
    for n, item in enumerate(datasets):
        entry = _dataset(item, n)
        if len(orjson.dumps(entry)) > MAX_INPUT_BYTES:
            raise MlflowError(
                "INVALID_PARAMETER_VALUE",
                f"dataset input {entry['dataset']['name']!r} is over {MAX_INPUT_BYTES} bytes "
                "as JSON",
            )
        kept.append(entry)
    return kept
