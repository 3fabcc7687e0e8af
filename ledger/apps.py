from django.apps import AppConfig


class LedgerConfig(AppConfig):
    name = "ledger"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # The tasks registered with Celery: the services enqueue them by name.
        # Committing a plan posts its reserved lots (see ledger.signals).
        from ledger import (
            signals,
            tasks,  # noqa: F401
        )

        signals.connect()
