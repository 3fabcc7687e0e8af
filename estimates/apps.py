from django.apps import AppConfig


class EstimatesConfig(AppConfig):
    name = "estimates"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Plan changes and pilot measurements mark forecasts stale (see estimates.events); the
        # tasks registered with Celery (the services enqueue them by name).
        from campaigns.api import estimate_spec
        from estimates import (
            events,
            tasks,  # noqa: F401
        )
        from estimates.api.serializers import check_estimate_spec

        events.subscribe()
        # A planned item's estimate_spec is checked by the preview's serializers (§24.9).
        estimate_spec.register(check_estimate_spec)
