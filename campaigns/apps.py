from django.apps import AppConfig


class CampaignsConfig(AppConfig):
    name = "campaigns"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Registers the ingest-key scheme with drf-spectacular before any schema is generated
        # (`check --deploy` generates one and fails on its warnings).
        from campaigns import signals, tasks
        from campaigns.api import schema  # noqa: F401

        # A finished run's points are packed after the finish commits (docs/metric_store.md
        # §3 "Two tiers").
        signals.run_finished.connect(tasks.pack_when_finished, dispatch_uid="campaigns.pack")
