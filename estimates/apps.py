from django.apps import AppConfig


class EstimatesConfig(AppConfig):
    name = "estimates"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # The tasks registered with Celery: the services enqueue them by name.
        # Plan changes and pilot measurements mark forecasts stale (see estimates.signals).
        from campaigns.api import estimate_spec
        from estimates import (
            signals,
            tasks,  # noqa: F401
        )
        from estimates.api.serializers import check_estimate_spec

        signals.connect()
        # A planned item's estimate_spec is checked by the preview's serializers (§24.9).
        estimate_spec.register(check_estimate_spec)
