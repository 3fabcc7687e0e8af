"""Experiments: a campaign is its default experiment, and a script's `set_experiment("sweep")`
makes a named experiment inside the key's campaign (docs/mlflow.md "Experiments"); plus the
server-info call the client makes before large uploads."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.http import HttpRequest, HttpResponse

from mlflow_api import services, shapes
from mlflow_api.auth import Caller
from mlflow_api.domain import names
from mlflow_api.domain.search_filter import SearchError
from mlflow_api.errors import MlflowError
from mlflow_api.models import DEFAULT_NAME, Experiment
from mlflow_api.selectors.experiments import default_tags, search_experiments
from mlflow_api.services.experiments import NameTaken
from mlflow_api.views.lookups import (
    DEFAULT_EXPERIMENT_NAME,
    Place,
    experiment_by_name,
    experiment_of,
)
from mlflow_api.views.wire import (
    MAX_KEY,
    answer,
    checked_key,
    endpoint,
    key_values,
    read_body,
    text_field,
)

MAX_NAME = 500
MAX_EXPERIMENT_TAG = 20_000


@endpoint("GET")
def server_info(request: HttpRequest, caller: Caller) -> HttpResponse:
    """What the client asks before large uploads: no multipart, files go in one PUT."""
    return answer(
        {
            "store_type": "CampaignDesk",
            "workspaces_enabled": False,
            "multipart_uploads_enabled": False,
            "multipart_downloads_enabled": False,
            "artifact_max_bytes": settings.ARTIFACT_MAX_BYTES,
        }
    )


def _shown(place: Place) -> dict[str, Any]:
    tags = default_tags(place.campaign) if place.experiment is None else {}
    return shapes.experiment(place.campaign, place.experiment, tags)


@endpoint("GET")
def experiment_get_by_name(request: HttpRequest, caller: Caller) -> HttpResponse:
    name = text_field(read_body(request), "experiment_name", limit=MAX_NAME)
    return answer({"experiment": _shown(experiment_by_name(caller, name))})


@endpoint("GET")
def experiment_get(request: HttpRequest, caller: Caller) -> HttpResponse:
    data = read_body(request)
    text_field(data, "experiment_id")
    return answer({"experiment": _shown(experiment_of(caller, data["experiment_id"]))})


def _artifact_location(location: str) -> None:
    """Artifacts stay in Campaign Desk's storage: an experiment cannot point them elsewhere."""
    if location and not location.startswith("mlflow-artifacts:"):
        raise MlflowError(
            "INVALID_PARAMETER_VALUE",
            f"artifact_location {location!r}: artifacts are kept by Campaign Desk (its storage, "
            "docs/mlflow.md); create the experiment without an artifact_location",
        )


@endpoint("POST")
def experiment_create(request: HttpRequest, caller: Caller) -> HttpResponse:
    """A named experiment in the key's campaign. A user token names a campaign (its id or
    title), which answers that campaign's default experiment."""
    data = read_body(request)
    name = text_field(data, "name", limit=MAX_NAME)
    location = text_field(data, "artifact_location", required=False, limit=MAX_NAME)
    tags = key_values(data.get("tags"), "tags", MAX_EXPERIMENT_TAG)
    _artifact_location(location)
    if caller.key is None:
        return answer({"experiment_id": experiment_by_name(caller, name).experiment_id})
    campaign = caller.key.campaign
    if name.strip() in ("", DEFAULT_EXPERIMENT_NAME, campaign.title):
        raise MlflowError(
            "RESOURCE_ALREADY_EXISTS",
            f"Experiment(name={name}) already exists: the campaign's default experiment",
        )
    try:
        created = services.create_experiment(campaign=campaign, name=name, tags=tags)
    except NameTaken:
        raise MlflowError(
            "RESOURCE_ALREADY_EXISTS", f"Experiment(name={name}) already exists."
        ) from None
    return answer({"experiment_id": created.experiment_id})


def _writable(caller: Caller, data: dict[str, Any]) -> Place:
    text_field(data, "experiment_id")
    place = experiment_of(caller, data["experiment_id"])
    caller.require_write(place.campaign.team_id)
    return place


def _named(place: Place, action: str) -> Experiment:
    if place.experiment is None:
        raise MlflowError(
            "INVALID_PARAMETER_VALUE",
            f"experiment {place.experiment_id} is a campaign (its default experiment): "
            f"{action} it in Campaign Desk",
        )
    return place.experiment


@endpoint("POST")
def experiment_set_tag(request: HttpRequest, caller: Caller) -> HttpResponse:
    data = read_body(request)
    place = _writable(caller, data)
    key = checked_key(text_field(data, "key", limit=MAX_KEY), "key")
    value = text_field(data, "value", required=False, limit=MAX_EXPERIMENT_TAG)
    services.set_experiment_tags(
        campaign=place.campaign, experiment=place.experiment, tags={key: value}
    )
    return answer({})


@endpoint("POST")
def experiment_delete_tag(request: HttpRequest, caller: Caller) -> HttpResponse:
    data = read_body(request)
    place = _writable(caller, data)
    key = text_field(data, "key", limit=MAX_KEY)
    experiment = (
        place.experiment
        or Experiment.objects.filter(campaign=place.campaign, name=DEFAULT_NAME).first()
    )
    if experiment is None or key not in experiment.tags:
        raise MlflowError("RESOURCE_DOES_NOT_EXIST", f"No tag with name: {key} in experiment")
    services.delete_experiment_tag(experiment=experiment, key=key)
    return answer({})


@endpoint("POST")
def experiment_update(request: HttpRequest, caller: Caller) -> HttpResponse:
    """Rename a named experiment (a campaign's title is changed in Campaign Desk)."""
    data = read_body(request)
    experiment = _named(_writable(caller, data), "rename")
    name = text_field(data, "new_name", limit=MAX_NAME)
    if name in (DEFAULT_EXPERIMENT_NAME, experiment.campaign.title):
        raise MlflowError("RESOURCE_ALREADY_EXISTS", f"Experiment(name={name}) already exists.")
    try:
        services.rename_experiment(experiment=experiment, name=name)
    except NameTaken:
        raise MlflowError(
            "RESOURCE_ALREADY_EXISTS", f"Experiment(name={name}) already exists."
        ) from None
    return answer({})


@endpoint("POST")
def experiment_delete(request: HttpRequest, caller: Caller) -> HttpResponse:
    """Soft, as MLflow's: its runs stay in the campaign with their hours and cost."""
    experiment = _named(_writable(caller, read_body(request)), "close")
    services.delete_experiment(experiment=experiment)
    return answer({})


@endpoint("POST")
def experiment_restore(request: HttpRequest, caller: Caller) -> HttpResponse:
    experiment = _named(_writable(caller, read_body(request)), "reopen")
    services.restore_experiment(experiment=experiment)
    return answer({})


VIEW_TYPES = ("ACTIVE_ONLY", "DELETED_ONLY", "ALL")
MAX_RESULTS = 50_000


def _max_results(value: Any) -> int:
    if value is None or value == "":
        return 1000
    if isinstance(value, str) and value.isascii() and value.isdigit() and len(value) < 10:
        value = int(value)
    if type(value) is not int or not 1 <= value <= MAX_RESULTS:
        raise MlflowError(
            "INVALID_PARAMETER_VALUE", f"max_results is a whole number from 1 to {MAX_RESULTS}"
        )
    return value


@endpoint("POST", "GET")
def experiment_search(request: HttpRequest, caller: Caller) -> HttpResponse:
    data = read_body(request)
    view_type = str(data.get("view_type") or "ACTIVE_ONLY")
    if view_type not in VIEW_TYPES:
        raise MlflowError("INVALID_PARAMETER_VALUE", names.invalid("view_type", view_type))
    try:
        found, token = search_experiments(
            caller.campaigns(),
            filter_string=text_field(data, "filter", required=False, limit=10_000),
            order_by=_strings(data.get("order_by"), "order_by"),
            view_type=view_type,
            max_results=_max_results(data.get("max_results")),
            page_token=text_field(data, "page_token", required=False, limit=1000) or None,
        )
    except SearchError as exc:
        raise MlflowError("INVALID_PARAMETER_VALUE", f"experiments/search: {exc}") from exc
    body: dict[str, Any] = {"experiments": found}
    if token:
        body["next_page_token"] = token
    return answer(body)


def _strings(value: Any, field: str) -> list[str]:
    if value is None or value == "":
        return []
    if isinstance(value, str):
        return [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise MlflowError("INVALID_PARAMETER_VALUE", names.invalid(field, value))
    return value
