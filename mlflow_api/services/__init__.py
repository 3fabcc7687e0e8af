"""The write path of the MLflow facade's own records (experiments, the runs' MLflow side, logged
models). Run data never goes through here: it goes through campaigns/services (ingest, run_log),
as /api/v1/ does."""

from mlflow_api.services.experiments import (
    create_experiment,
    delete_experiment,
    delete_experiment_tag,
    place_run,
    rename_experiment,
    restore_experiment,
    set_experiment_tags,
)
from mlflow_api.services.logged_models import (
    create_logged_model,
    delete_logged_model,
    record_model_file,
    update_logged_model,
)

__all__ = [
    "create_experiment",
    "create_logged_model",
    "delete_experiment",
    "delete_experiment_tag",
    "delete_logged_model",
    "place_run",
    "record_model_file",
    "rename_experiment",
    "restore_experiment",
    "set_experiment_tags",
    "update_logged_model",
]
