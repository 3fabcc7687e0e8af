from django.apps import AppConfig


class MlflowApiConfig(AppConfig):
    """MLflow's tracking REST API under /mlflow/, mapped onto campaigns (docs/mlflow.md)."""

    default_auto_field = "django.db.models.BigAutoField"
    name = "mlflow_api"
    verbose_name = "MLflow facade"
