"""MLflow's REST paths, under /mlflow/ (MLFLOW_TRACKING_URI=http://HOST/mlflow)."""

from django.urls import path, re_path

from mlflow_api import views

M = "api/2.0/mlflow/"

urlpatterns = [
    path(f"{M}experiments/get-by-name", views.experiment_get_by_name),
    path(f"{M}experiments/get", views.experiment_get),
    path(f"{M}experiments/create", views.experiment_create),
    path(f"{M}experiments/search", views.experiment_search),
    path(f"{M}experiments/set-experiment-tag", views.experiment_set_tag),
    path(f"{M}experiments/delete-experiment-tag", views.experiment_delete_tag),
    path(f"{M}experiments/update", views.experiment_update),
    path(f"{M}experiments/delete", views.experiment_delete),
    path(f"{M}experiments/restore", views.experiment_restore),
    path(f"{M}runs/create", views.run_create),
    path(f"{M}runs/get", views.run_get),
    path(f"{M}runs/update", views.run_update),
    path(f"{M}runs/delete", views.run_delete),
    path(f"{M}runs/restore", views.run_restore),
    path(f"{M}runs/search", views.run_search),
    path(f"{M}runs/log-metric", views.log_metric),
    path(f"{M}runs/log-batch", views.log_batch),
    path(f"{M}runs/log-parameter", views.log_param),
    path(f"{M}runs/set-tag", views.set_tag),
    path(f"{M}runs/delete-tag", views.delete_tag),
    path(f"{M}runs/log-inputs", views.log_inputs),
    path(f"{M}runs/outputs", views.log_outputs),
    path(f"{M}runs/log-model", views.log_model),
    path(f"{M}metrics/get-history", views.metric_history),
    path(f"{M}logged-models", views.logged_models),
    path(f"{M}logged-models/search", views.logged_models_search),
    path(f"{M}logged-models/<str:model_id>", views.logged_model),
    path(f"{M}logged-models/<str:model_id>/tags", views.logged_model_tags),
    path(f"{M}logged-models/<str:model_id>/tags/<str:key>", views.logged_model_tag),
    path(f"{M}logged-models/<str:model_id>/params", views.logged_model_params),
    re_path(rf"^{M}(?P<rest>(registered-models|model-versions)(/.*)?)$", views.model_registry),
    path("api/2.0/mlflow-artifacts/artifacts", views.artifact_list),
    path("api/2.0/mlflow-artifacts/artifacts/<path:path>", views.artifact),
    path("api/3.0/mlflow/server-info", views.server_info),
    # Anything else answers MLflow's ENDPOINT_NOT_FOUND, not an HTML page.
    re_path(r"^", views.not_found),
]
