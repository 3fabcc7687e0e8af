from django.apps import AppConfig


class CampaignsConfig(AppConfig):
    name = "campaigns"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Registers the ingest-key scheme with drf-spectacular before any schema is generated
        # (`check --deploy` generates one and fails on its warnings).
        from campaigns.api import schema  # noqa: F401
