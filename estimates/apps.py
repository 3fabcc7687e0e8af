from django.apps import AppConfig


class EstimatesConfig(AppConfig):
    name = "estimates"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Plan changes and pilot measurements mark forecasts stale (see estimates.signals).
        from estimates import signals

        signals.connect()
