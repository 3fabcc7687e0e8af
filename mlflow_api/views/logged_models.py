"""Logged models (MLflow 3, autolog): kept per campaign, files under the source run's
artifacts (docs/mlflow.md)."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse

from campaigns.models import Run
from mlflow_api import services
from mlflow_api.auth import Caller
from mlflow_api.domain import names
from mlflow_api.domain.search_filter import SearchError
from mlflow_api.errors import MlflowError
from mlflow_api.models import LoggedModel, LoggedModelStatus
from mlflow_api.selectors.logged_models import model_json, search_logged_models
from mlflow_api.views.lookups import experiment_of
from mlflow_api.views.wire import (
    MAX_PARAM_VALUE,
    MAX_TAG_VALUE,
    answer,
    endpoint,
    key_values,
    read_body,
    text_field,
)


def _model(caller: Caller, model_id: str) -> LoggedModel:
    model = (
        LoggedModel.objects.filter(
            model_id=model_id, campaign__in=caller.campaigns(), deleted_at__isnull=True
        )
        .select_related("source_run", "campaign", "experiment")
        .first()
    )
    if model is None:
        raise MlflowError(
            "RESOURCE_DOES_NOT_EXIST", f"Logged model with ID '{model_id}' not found."
        )
    return model


def _source(caller: Caller, campaign_id: int, run_id: str) -> Run | None:
    """The run a source_run_id names in the campaign; None when it names none (MLflow keeps
    such an id without checking it; so does this facade, in `source_run_ref`)."""
    if not run_id:
        return None
    return caller.runs().filter(campaign_id=campaign_id, run_id=run_id).first()


@endpoint("POST")
def logged_models(request: HttpRequest, caller: Caller) -> HttpResponse:
    data = read_body(request)
    text_field(data, "experiment_id")
    place = experiment_of(caller, data["experiment_id"])
    caller.require_write(place.campaign.team_id)
    source_ref = text_field(data, "source_run_id", required=False, limit=200)
    # No replay of a stored answer: two log_model calls with one body are two models (MLflow's
    # own server does the same for a retried create).
    model = services.create_logged_model(
        campaign=place.campaign,
        experiment=place.experiment,
        name=text_field(data, "name", required=False),
        model_type=text_field(data, "model_type", required=False),
        source_run=_source(caller, place.campaign.pk, source_ref),
        source_run_ref=source_ref,
        tags=key_values(data.get("tags"), "tags", MAX_TAG_VALUE),
        params=key_values(data.get("params"), "params", MAX_PARAM_VALUE),
    )
    return answer({"model": model_json(model)})


@endpoint("POST")
def logged_models_search(request: HttpRequest, caller: Caller) -> HttpResponse:
    """MLflow's filter grammar on the models' attributes, params, tags and metrics; its
    order_by entries ({field_name, ascending}) and page tokens."""
    data = read_body(request)
    experiment_ids = data.get("experiment_ids") or []
    if not isinstance(experiment_ids, list):
        raise MlflowError(
            "INVALID_PARAMETER_VALUE", names.invalid("experiment_ids", experiment_ids)
        )
    places = [
        (place.campaign, place.experiment)
        for place in (experiment_of(caller, str(i)) for i in experiment_ids)
    ]
    try:
        found, token = search_logged_models(
            places,
            filter_string=text_field(data, "filter", required=False, limit=10_000),
            order_by=_order_by(data.get("order_by")),
            max_results=_max_results(data.get("max_results")),
            page_token=text_field(data, "page_token", required=False, limit=1000) or None,
        )
    except SearchError as exc:
        raise MlflowError("INVALID_PARAMETER_VALUE", f"logged-models/search: {exc}") from exc
    body: dict[str, Any] = {"models": found}
    if token:
        body["next_page_token"] = token
    return answer(body)


def _order_by(raw: Any) -> list[str]:
    """MLflow sends `[{"field_name": "metrics.acc", "ascending": false}]`; as order strings."""
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise MlflowError("INVALID_PARAMETER_VALUE", names.invalid("order_by", raw))
    orders = []
    for entry in raw:
        if not isinstance(entry, dict) or not isinstance(entry.get("field_name"), str):
            raise MlflowError("INVALID_PARAMETER_VALUE", names.invalid("order_by", entry))
        direction = "ASC" if entry.get("ascending", True) is not False else "DESC"
        orders.append(f"{entry['field_name']} {direction}")
    return orders


def _max_results(value: Any) -> int:
    if value is None or value == "":
        return 100
    if type(value) is not int or not 1 <= value <= 1000:
        raise MlflowError("INVALID_PARAMETER_VALUE", "max_results is a whole number from 1 to 1000")
    return value


@endpoint("GET", "PATCH", "DELETE")
def logged_model(request: HttpRequest, caller: Caller, model_id: str) -> HttpResponse:
    model = _model(caller, model_id)
    if request.method == "GET":
        return answer({"model": model_json(model)})
    caller.require_write(model.campaign.team_id)
    if request.method == "DELETE":
        services.delete_logged_model(model)
        return answer({})
    status = read_body(request).get("status")
    if status not in LoggedModelStatus.values:
        raise MlflowError(
            "INVALID_PARAMETER_VALUE", f"status is one of {', '.join(LoggedModelStatus.values)}"
        )
    model = services.update_logged_model(model, status=status)
    return answer({"model": model_json(model)})


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
    if key not in model.tags:
        raise MlflowError("RESOURCE_DOES_NOT_EXIST", f"No tag with key {key!r} on {model_id}")
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
