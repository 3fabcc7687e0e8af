"""The MLflow wire format: its request bodies, its `{"error_code", "message"}` errors, and the
`endpoint` decorator every view of the facade wears (authenticate, throttle, allow methods, map
errors).

No input answers a 5xx (issue 19; docs/domain.md §26): MLflow's client retries 5xx, re-sending
whole uploads. Text PostgreSQL cannot store (NUL, lone surrogates) is refused wherever it comes
(path, query, body) before any lookup; a body over DATA_UPLOAD_MAX_MEMORY_SIZE is MLflow's JSON
413; a closed campaign's refusal is INVALID_STATE.

Plain Django views, not DRF: the wire format is MLflow's (its paths, its request bodies, its
errors), not this project's API, and it stays out of the OpenAPI schema.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from decimal import Decimal
from typing import Any

import orjson
from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.db import DataError
from django.http import HttpRequest, HttpResponse, HttpResponseBase
from django.views.decorators.csrf import csrf_exempt

from campaigns.api.throttles import rate_limit_wait
from campaigns.models import CampaignClosed
from catalog.domain.display_text import bidi_refusal
from mlflow_api.auth import Caller, authenticate
from mlflow_api.domain import names
from mlflow_api.errors import MlflowError

log = logging.getLogger(__name__)

JSON = "application/json"
MAX_KEY = 250
MAX_PARAM_VALUE = 6000
MAX_TAG_VALUE = 8000
HOURS_MAX = Decimal("9999999.99")
ARTIFACT_CHUNK = 1024 * 1024

Handler = Callable[..., HttpResponseBase]


def answer(body: Any, status: int = 200) -> HttpResponse:
    return HttpResponse(orjson.dumps(body), status=status, content_type=JSON)


def endpoint(*methods: str, remember_key: bool = False) -> Callable[[Handler], Handler]:
    """Authenticate, allow `methods`, and turn MlflowError into MLflow's error shape.
    `remember_key`: the view's write checks the key again (mlflow_api/auth.py), so a key seen
    in the last seconds need not be read first."""

    def wrap(view: Handler) -> Handler:
        def handle(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
            if request.method not in methods:
                return error_answer(
                    MlflowError(
                        "ENDPOINT_NOT_FOUND", f"{request.method} is not served here", status=405
                    )
                )
            try:
                refuse_unstorable(request.path, "the path")
                refuse_unstorable(list(kwargs.values()), "the path")
                caller = authenticate(request, remember=remember_key)
                throttle(caller)
                return view(request, caller, *args, **kwargs)
            except MlflowError as exc:
                return error_answer(exc)
            except CampaignClosed as exc:
                return error_answer(MlflowError("INVALID_STATE", str(exc)))
            except DataError as exc:
                # The last guard: a value the database refused is the caller's bad input, never a
                # 500 that MLflow's client would retry. Logged: a check above should have met it.
                log.warning("mlflow %s: the database refused a value: %s", request.path, exc)
                return error_answer(
                    MlflowError(
                        "INVALID_PARAMETER_VALUE", "a value of the request cannot be stored"
                    )
                )

        handle.__name__ = view.__name__
        handle.__doc__ = view.__doc__
        return csrf_exempt(handle)

    return wrap


@csrf_exempt
def not_found(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
    return error_answer(
        MlflowError(
            "ENDPOINT_NOT_FOUND",
            f"{request.method} {request.path} is not part of Campaign Desk's MLflow API "
            "(docs/mlflow.md lists what is)",
        )
    )


def is_id(text: str) -> bool:
    """A database id as text: ASCII digits only ("²".isdigit() is True, and int() refuses it),
    short enough for a bigint."""
    return text.isascii() and text.isdigit() and len(text) <= 18


def throttle(caller: Caller) -> None:
    """The API's own buckets and settings (REST_FRAMEWORK DEFAULT_THROTTLE_RATES "ingest_key",
    "user"): one key has one budget across /api/v1/ and /mlflow/. Over it: MLflow's 429, which
    its client retries after a backoff."""
    wait = rate_limit_wait(
        ingest_key_id=caller.key.pk if caller.key is not None else None,
        user_id=caller.user.pk if caller.key is None and caller.user is not None else None,
    )
    if wait is not None:
        raise Throttled(wait)


class Throttled(MlflowError):
    def __init__(self, wait: float) -> None:
        super().__init__(
            "REQUEST_LIMIT_EXCEEDED",
            f"request limit reached (the API's throttle rates); retry in {wait:.0f} s",
            status=429,
        )
        self.wait = wait


def error_answer(exc: MlflowError) -> HttpResponse:
    response = answer(exc.body(), exc.status)
    if isinstance(exc, Throttled):
        response["Retry-After"] = str(max(1, round(exc.wait + 0.5)))
    return response


def _unstorable(value: Any) -> bool:
    """Whether a string inside `value` holds NUL or a lone surrogate (PostgreSQL takes neither)."""
    if isinstance(value, str):
        if "\x00" in value:
            return True
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return True
        return False
    if isinstance(value, dict):
        return any(_unstorable(k) or _unstorable(v) for k, v in value.items())
    if isinstance(value, list | tuple):
        return any(_unstorable(v) for v in value)
    return False


def refuse_unstorable(value: Any, where: str) -> None:
    if _unstorable(value):
        raise MlflowError(
            "INVALID_PARAMETER_VALUE",
            f"{where} holds a NUL byte or a lone surrogate, which no field can store",
        )


def read_body(request: HttpRequest) -> dict[str, Any]:
    if request.method == "GET":
        query = {k: request.GET.get(k) for k in request.GET}
        refuse_unstorable(query, "the query string")
        return query
    try:
        raw = request.body
    except RequestDataTooBig:
        raise MlflowError(
            "RESOURCE_EXHAUSTED",
            f"the body is over {settings.DATA_UPLOAD_MAX_MEMORY_SIZE} bytes "
            "(DATA_UPLOAD_MAX_MEMORY_SIZE); send large files as artifacts",
            status=413,
        ) from None
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
    refuse_unstorable(data, "the body")
    return data


def text_field(
    data: dict[str, Any], field: str, *, required: bool = True, limit: int = MAX_KEY
) -> str:
    """A string field, refused in MLflow's words when missing (if required) or not a string
    (`123` for a name: MLflow's server refuses it too)."""
    value = data.get(field)
    if value is None or value == "":
        if required:
            raise MlflowError("INVALID_PARAMETER_VALUE", names.missing(field))
        return ""
    if not isinstance(value, str):
        raise MlflowError("INVALID_PARAMETER_VALUE", names.invalid(field, value))
    if len(value) > limit:
        raise MlflowError(
            "INVALID_PARAMETER_VALUE", f"'{field}' exceeds the maximum length of {limit} characters"
        )
    return value


def checked_key(key: str, field: str) -> str:
    """A metric, param or tag key as MLflow's server takes it (mlflow_api/domain/names.py)."""
    problem = names.key_problem(key)
    if problem is not None:
        raise MlflowError("INVALID_PARAMETER_VALUE", names.invalid(field, key, problem))
    return key


def key_values(items: Any, field: str, value_limit: int, *, unique: bool = False) -> dict[str, str]:
    """MLflow's `[{"key", "value"}, ...]` as a dict (a later key wins, as in MLflow; with
    `unique`, a key given twice is refused, as MLflow's log-batch refuses params)."""
    if items is None:
        return {}
    if not isinstance(items, list):
        raise MlflowError("INVALID_PARAMETER_VALUE", names.invalid(field, items))
    out: dict[str, str] = {}
    for n, item in enumerate(items):
        if not isinstance(item, dict):
            raise MlflowError("INVALID_PARAMETER_VALUE", names.invalid(f"{field}[{n}]", item))
        key = checked_key(text_field(item, "key"), f"{field}[{n}].key")
        value = item.get("value")
        out[key] = (
            "" if value is None else text_field(item, "value", required=False, limit=value_limit)
        )
        if key == RUN_NAME_TAG:
            checked_run_name(out[key], f"{field}: {RUN_NAME_TAG}")
    if unique:
        twice = names.duplicate_keys([item["key"] for item in items])
        if twice:
            raise MlflowError(
                "INVALID_PARAMETER_VALUE",
                f"Duplicate parameter keys have been submitted: {twice}. Please ensure the "
                "request contains only one param value per param key.",
            )
    return out


# MLflow's client names a run by this tag as well as by `run_name`.
RUN_NAME_TAG = "mlflow.runName"


def checked_run_name(name: str, field: str) -> str:
    """A run's display name, refused (400 naming `field`) with a bidirectional control in it
    (docs/domain.md §25; the REST API and the admin refuse it through the model's validator)."""
    refusal = bidi_refusal(name)
    if refusal is not None:
        raise MlflowError("INVALID_PARAMETER_VALUE", f"parameter '{field}': {refusal}")
    return name
