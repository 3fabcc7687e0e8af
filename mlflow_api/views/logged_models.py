"""Logged models (MLflow 3, autolog): kept per campaign, files under the source run's
artifacts (docs/mlflow.md)."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse

from mlflow_api import services, shapes
from mlflow_api.auth import Caller
from mlflow_api.errors import MlflowError
from mlflow_api.models import LoggedModel, LoggedModelStatus
from mlflow_api.views.lookups import (
    campaign_of,
    run_of,
)
from mlflow_api.views.wire import (
    MAX_PARAM_VALUE,
    MAX_TAG_VALUE,
    answer,
    endpoint,
    is_id,
    key_values,
    read_body,
    text_field,
)


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
    data = read_body(request)
    campaign = campaign_of(caller, data.get("experiment_id"))
    caller.require_write(campaign.team_id)
    source = None
    if data.get("source_run_id"):
        source = run_of(caller, {"run_id": data["source_run_id"]})
        if source.campaign_id != campaign.pk:
            raise MlflowError("INVALID_PARAMETER_VALUE", "the source run is in another campaign")

    # No replay of a stored answer: two log_model calls with one body are two models (MLflow's
    # own server does the same for a retried create).
    model = services.create_logged_model(
        campaign=campaign,
        name=text_field(data, "name", required=False),
        model_type=text_field(data, "model_type", required=False),
        source_run=source,
        tags=key_values(data.get("tags"), "tags", MAX_TAG_VALUE),
        params=key_values(data.get("params"), "params", MAX_PARAM_VALUE),
    )
    return answer({"model": _model_json(model)})


@endpoint("POST")
def logged_models_search(request: HttpRequest, caller: Caller) -> HttpResponse:
    data = read_body(request)
    experiment_ids = data.get("experiment_ids") or []
    if not isinstance(experiment_ids, list):
        raise MlflowError("INVALID_PARAMETER_VALUE", "experiment_ids is a list of ids")
    ids = [str(i) for i in experiment_ids if is_id(str(i))]
    models = LoggedModel.objects.filter(campaign__in=caller.campaigns(), campaign_id__in=ids)
    return answer({"models": [_model_json(m) for m in models.select_related("source_run")[:1000]]})


@endpoint("GET", "PATCH", "DELETE")
def logged_model(request: HttpRequest, caller: Caller, model_id: str) -> HttpResponse:
    model = _model(caller, model_id)
    if request.method == "GET":
        return answer({"model": _model_json(model)})
    caller.require_write(model.campaign.team_id)
    if request.method == "DELETE":
        raise MlflowError("INVALID_STATE", "logged models are kept with their campaign")
    status = read_body(request).get("status")
    if status not in LoggedModelStatus.values:
        raise MlflowError(
            "INVALID_PARAMETER_VALUE", f"status is one of {', '.join(LoggedModelStatus.values)}"
        )
    model = services.update_logged_model(model, status=status)
    return answer({"model": _model_json(model)})


@endpoint("PATCH")
def logged_model_tags(request: HttpRequest, caller: Caller, model_id: str) -> HttpResponse:
    model = _model(caller, model_id)
    caller.require_write(model.campaign.team_id)
    tags = key_values(read_body(request).get("tags"), "tags", MAX_TAG_VALUE)
    services.update_logged_model(model, tags=tags)
    return answer({})


@endpoint("DELETE")
def logged_model_tag(request: HttpRequest, caller: Caller, model_id: str, key: str) -> HttpResponse:
    model = _model(caller, model_id)
    caller.require_write(model.campaign.team_id)
    services.update_logged_model(model, delete_tags=(key,))
    return answer({})


@endpoint("POST")
def logged_model_params(request: HttpRequest, caller: Caller, model_id: str) -> HttpResponse:
    model = _model(caller, model_id)
    caller.require_write(model.campaign.team_id)
    params = key_values(read_body(request).get("params"), "params", MAX_PARAM_VALUE)
    services.update_logged_model(model, params=params)
    return answer({})


def _latest_model_words(caller: Caller, data: dict[str, Any]) -> str:
    """Where the caller's model is: the version's `source`/`model_id` when sent, else the
    campaign's latest logged model (log_model stores it before registering)."""
    model_id = str(data.get("model_id") or "")
    source = str(data.get("source") or "")
    if not model_id and source.startswith("models:/m-"):
        model_id = source.removeprefix("models:/").split("/")[0]
    model = (
        LoggedModel.objects.filter(campaign__in=caller.campaigns(), model_id=model_id).first()
        if model_id
        else LoggedModel.objects.filter(campaign__in=caller.campaigns()).order_by("-id").first()
    )
    if model is None:
        return "Log the model with mlflow.<flavor>.log_model(...) without registered_model_name"
    return (
        f"The model is stored: logged model {model.model_id} ({model.name}), loadable with "
        f"mlflow.pyfunc.load_model('models:/{model.model_id}') or mlflow.<flavor>.load_model"
    )


@endpoint("GET", "POST", "PATCH", "DELETE")
def model_registry(request: HttpRequest, caller: Caller, rest: str = "") -> HttpResponse:
    """The model registry is not served: refused with where the model is and how to load it."""
    data = read_body(request) if request.method != "DELETE" else {}
    raise MlflowError(
        "FEATURE_DISABLED",
        "Campaign Desk serves no model registry (registered models, versions, aliases; "
        f"docs/mlflow.md). {_latest_model_words(caller, data)}.",
        status=400,
    )
