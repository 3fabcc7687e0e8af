"""runs/search: `mlflow.search_runs`, `MlflowClient.search_runs` and `load_table` over the
caller's campaigns, with MLflow's filter grammar (mlflow_api/domain/search_filter.py)."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse

from mlflow_api.auth import Caller
from mlflow_api.domain import names
from mlflow_api.domain.search_filter import SearchError
from mlflow_api.errors import MlflowError
from mlflow_api.selectors.run_search import VIEW_TYPES, search_runs
from mlflow_api.views.wire import answer, endpoint, is_id, read_body

MAX_RESULTS = 50_000


def _max_results(value: object) -> int:
    if value is None or value == "":
        return 1000
    if isinstance(value, str) and is_id(value):
        value = int(value)
    if type(value) is not int or not 1 <= value <= MAX_RESULTS:
        raise MlflowError(
            "INVALID_PARAMETER_VALUE",
            names.invalid("max_results", value, f"a whole number from 1 to {MAX_RESULTS}"),
        )
    return value


@endpoint("POST", "GET")
def run_search(request: HttpRequest, caller: Caller) -> HttpResponse:
    data = read_body(request)
    experiment_ids = _experiment_ids(data, caller)
    view_type = _view_type(data)
    try:
        found = search_runs(
            caller.runs(),
            experiment_ids=experiment_ids,
            filter_string=str(data.get("filter") or ""),
            order_by=_as_list(data.get("order_by")),
            view_type=view_type,
            max_results=_max_results(data.get("max_results")),
            page_token=data.get("page_token") or None,
        )
    except SearchError as exc:
        raise MlflowError("INVALID_PARAMETER_VALUE", f"runs/search: {exc}") from exc
    body: dict[str, object] = {"runs": found.runs}
    if found.next_page_token:
        body["next_page_token"] = found.next_page_token
    return answer(body)


def _as_list(value: Any) -> list[str]:
    """A list of strings; one string sent alone is a list of one (MLflow's clients send either)."""
    items = value or []
    if isinstance(items, str):
        items = [items]
    return [str(i) for i in items]


def _experiment_ids(data: dict[str, Any], caller: Caller) -> list[str]:
    experiment_ids = data.get("experiment_ids") or []
    if isinstance(experiment_ids, str):
        experiment_ids = [experiment_ids]
    if not isinstance(experiment_ids, list):
        raise MlflowError("INVALID_PARAMETER_VALUE", "experiment_ids is a list of ids")
    if caller.key is not None:
        # MLflow's default experiment "0" is the key's campaign, as everywhere else.
        experiment_ids = [
            str(caller.key.campaign_id) if str(i) == "0" else i for i in experiment_ids
        ]
    return [str(i) for i in experiment_ids]


def _view_type(data: dict[str, Any]) -> str:
    view_type = str(data.get("run_view_type") or "ACTIVE_ONLY")
    if view_type not in VIEW_TYPES:
        raise MlflowError(
            "INVALID_PARAMETER_VALUE", f"run_view_type is one of {', '.join(VIEW_TYPES)}"
        )
    return view_type
