"""The MLflow wire format: its request bodies, its `{"error_code", "message"}` errors, and the
`endpoint` decorator every view of the facade wears (authenticate, allow methods, map errors).

Plain Django views, not DRF: the wire format is MLflow's (its paths, its request bodies, its
errors), not this project's API, and it stays out of the OpenAPI schema.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from decimal import Decimal
from typing import Any

import orjson
from django.http import HttpRequest, HttpResponse, HttpResponseBase
from django.views.decorators.csrf import csrf_exempt

from catalog.domain.display_text import bidi_refusal
from mlflow_api.auth import authenticate
from mlflow_api.errors import MlflowError

JSON = "application/json"
MAX_KEY = 250
MAX_PARAM_VALUE = 6000
MAX_TAG_VALUE = 8000
HOURS_MAX = Decimal("9999999.99")
ARTIFACT_CHUNK = 1024 * 1024

Handler = Callable[..., HttpResponseBase]


def answer(body: Any, status: int = 200) -> HttpResponse:
    return HttpResponse(orjson.dumps(body), status=status, content_type=JSON)


def error_answer(exc: MlflowError) -> HttpResponse:
    return answer(exc.body(), exc.status)


def endpoint(*methods: str) -> Callable[[Handler], Handler]:
    """Authenticate, allow `methods`, and turn MlflowError into MLflow's error shape."""

    def wrap(view: Handler) -> Handler:
        def handle(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
            if request.method not in methods:
                return error_answer(
                    MlflowError(
                        "ENDPOINT_NOT_FOUND", f"{request.method} is not served here", status=405
                    )
                )
            try:
                caller = authenticate(request)
                return view(request, caller, *args, **kwargs)
            except MlflowError as exc:
                return error_answer(exc)

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


def read_body(request: HttpRequest) -> dict[str, Any]:
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


def text_field(
    data: dict[str, Any], field: str, *, required: bool = True, limit: int = MAX_KEY
) -> str:
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


def key_values(items: Any, field: str, value_limit: int) -> dict[str, str]:
    """MLflow's `[{"key", "value"}, ...]` as a dict (a later key wins, as in MLflow)."""
    if items is None:
        return {}
    if not isinstance(items, list):
        raise MlflowError("INVALID_PARAMETER_VALUE", f"'{field}' is a list of {{key, value}}")
    out: dict[str, str] = {}
    for item in items:
        if not isinstance(item, dict):
            raise MlflowError("INVALID_PARAMETER_VALUE", f"'{field}' is a list of {{key, value}}")
        key = text_field(item, "key")
        value = item.get("value")
        out[key] = (
            "" if value is None else text_field(item, "value", required=False, limit=value_limit)
        )
        if key == RUN_NAME_TAG:
            checked_run_name(out[key], f"{field}: {RUN_NAME_TAG}")
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
