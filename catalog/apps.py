from django.apps import AppConfig


class CatalogConfig(AppConfig):
    """The bottom layer: GPU models and rental plans, which every other app reads."""

    name = "catalog"
    default_auto_field = "django.db.models.BigAutoField"
