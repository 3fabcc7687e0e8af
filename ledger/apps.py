from django.apps import AppConfig


class LedgerConfig(AppConfig):
    name = "ledger"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Committing a plan posts its reserved lots (see ledger.signals).
        from ledger import signals

        signals.connect()
