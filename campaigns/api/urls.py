"""The campaigns API under /api/v1/ (docs/api.md: campaign planning and run logging)."""

from django.urls import path, register_converter

from campaigns.api import ingest_keys as api_keys
from campaigns.api import plan_edits, run_actions
from campaigns.api import teams as teams_api
from campaigns.api import views as api
from campaigns.api.serializers import RUN_ID_PATTERN


class RunIdConverter:
    """A client-chosen run id, as RunCreateSerializer accepts it; anything else is a 404."""

    regex = RUN_ID_PATTERN

    def to_python(self, value: str) -> str:
        return value

    def to_url(self, value: str) -> str:
        return value


register_converter(RunIdConverter, "run_id")

urlpatterns = [
    path("teams/<int:id>/", teams_api.TeamDetail.as_view(), name="team-detail"),
    path("ingest-key/", api_keys.CallingIngestKey.as_view(), name="calling-ingest-key"),
    path("campaigns/", api.CampaignList.as_view(), name="campaign-list"),
    path("campaigns/<int:id>/", api.CampaignDetail.as_view(), name="campaign-detail"),
    path("campaigns/<int:id>/commit/", api.CommitCampaign.as_view(), name="campaign-commit"),
    path("campaigns/<int:id>/close/", api.CloseCampaign.as_view(), name="campaign-close"),
    path("campaigns/<int:id>/variants/", api.CampaignVariants.as_view(), name="campaign-variants"),
    path(
        "campaigns/<int:id>/stop-rules/",
        api.CampaignStopRules.as_view(),
        name="campaign-stop-rules",
    ),
    path(
        "campaigns/<int:id>/decisions/", api.CampaignDecisions.as_view(), name="campaign-decisions"
    ),
    path("campaigns/<int:id>/stages/", api.CampaignStages.as_view(), name="campaign-stages"),
    path("campaigns/<int:id>/runs/", api.CampaignRuns.as_view(), name="campaign-runs"),
    path(
        "campaigns/<int:id>/ingest-keys/", api_keys.CampaignIngestKeys.as_view(), name="ingest-keys"
    ),
    # Plan editing after the first save: the services the admin calls (docs/api.md).
    path(
        "campaigns/<int:id>/variants/<int:item>/",
        plan_edits.VariantDetail.as_view(),
        name="campaign-variant-detail",
    ),
    path(
        "campaigns/<int:id>/stages/<int:sid>/",
        plan_edits.StageDetail.as_view(),
        name="campaign-stage-detail",
    ),
    path(
        "campaigns/<int:id>/stop-rules/<int:rid>/",
        plan_edits.StopRuleDetail.as_view(),
        name="campaign-stop-rule-detail",
    ),
    path("campaigns/<int:id>/lots/", plan_edits.CampaignLots.as_view(), name="campaign-lots"),
    path(
        "campaigns/<int:id>/lots/<int:lid>/",
        plan_edits.LotDetail.as_view(),
        name="campaign-lot-detail",
    ),
    path(
        "campaigns/<int:id>/ingest-keys/<int:key>/",
        plan_edits.IngestKeyDetail.as_view(),
        name="ingest-key-detail",
    ),
    path("runs/<run_id:run_id>/", run_actions.RunDetail.as_view(), name="run-detail"),
    path("runs/<run_id:run_id>/metrics/", api.RunMetrics.as_view(), name="run-metrics"),
    path(
        "runs/<run_id:run_id>/throughput/",
        run_actions.RunThroughput.as_view(),
        name="run-throughput",
    ),
    path(
        "runs/<run_id:run_id>/checkpoints/",
        run_actions.RunCheckpoints.as_view(),
        name="run-checkpoints",
    ),
    path(
        "runs/<run_id:run_id>/checkpoints/<int:id>/retrieved/",
        run_actions.RetrievedCheckpoint.as_view(),
        name="run-checkpoint-retrieved",
    ),
    path("runs/<run_id:run_id>/stop/", run_actions.StopRun.as_view(), name="run-stop"),
    path("runs/<run_id:run_id>/finish/", run_actions.FinishRun.as_view(), name="run-finish"),
    path(
        "runs/<run_id:run_id>/heartbeat/", run_actions.RunHeartbeat.as_view(), name="run-heartbeat"
    ),
    path(
        "runs/<run_id:run_id>/observed/",
        run_actions.RunObservedHours.as_view(),
        name="run-observed",
    ),
]
