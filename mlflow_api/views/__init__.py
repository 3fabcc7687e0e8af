"""MLflow's tracking REST API (the part training code calls) on top of campaigns, one module per
concept: the wire format (wire), lookups, experiments, runs, logging into a run (logs), logged
models, and artifacts. This package only re-exports the views mlflow_api/urls.py routes to; the
mapping is in docs/mlflow.md.
"""

from mlflow_api.views.artifacts import artifact, artifact_list
from mlflow_api.views.experiments import (
    experiment_create,
    experiment_delete,
    experiment_delete_tag,
    experiment_get,
    experiment_get_by_name,
    experiment_restore,
    experiment_search,
    experiment_set_tag,
    experiment_update,
    server_info,
)
from mlflow_api.views.logged_models import (
    logged_model,
    logged_model_params,
    logged_model_tag,
    logged_model_tags,
    logged_models,
    logged_models_search,
    model_registry,
)
from mlflow_api.views.logs import (
    delete_tag,
    log_batch,
    log_inputs,
    log_metric,
    log_model,
    log_outputs,
    log_param,
    metric_history,
    set_tag,
)
from mlflow_api.views.runs import run_create, run_delete, run_get, run_restore, run_update
from mlflow_api.views.search import run_search
from mlflow_api.views.wire import not_found

__all__ = [
    "artifact",
    "artifact_list",
    "delete_tag",
    "experiment_create",
    "experiment_delete",
    "experiment_delete_tag",
    "experiment_get",
    "experiment_get_by_name",
    "experiment_restore",
    "experiment_search",
    "experiment_set_tag",
    "experiment_update",
    "log_batch",
    "log_inputs",
    "log_metric",
    "log_model",
    "log_outputs",
    "log_param",
    "logged_model",
    "logged_model_params",
    "logged_model_tag",
    "logged_model_tags",
    "logged_models",
    "logged_models_search",
    "metric_history",
    "model_registry",
    "not_found",
    "run_create",
    "run_delete",
    "run_get",
    "run_restore",
    "run_search",
    "run_update",
    "server_info",
    "set_tag",
]
