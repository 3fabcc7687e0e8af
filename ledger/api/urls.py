from django.urls import path

from ledger.api import alert_channels as channels_api
from ledger.api import alerts as alerts_api
from ledger.api import clone as clone_api
from ledger.api import ledger_export as export_api
from ledger.api import spend as spend_api
from ledger.api import team_budget as team_budget_api
from ledger.api import views

app_name = "ledger"

urlpatterns = [
    path(
        "teams/<int:id>/ledger/export",
        export_api.TeamLedgerExport.as_view(),
        name="team-ledger-export",
    ),
    path("teams/<int:id>/budget/", team_budget_api.TeamBudget.as_view(), name="team-budget"),
    path(
        "teams/<int:id>/alert-channels/",
        channels_api.AlertChannelList.as_view(),
        name="alert-channels",
    ),
    path(
        "teams/<int:id>/alert-channels/<int:pk>/",
        channels_api.AlertChannelDetail.as_view(),
        name="alert-channel",
    ),
    path(
        "teams/<int:id>/alert-deliveries/",
        channels_api.AlertDeliveryList.as_view(),
        name="alert-deliveries",
    ),
    path(
        "teams/<int:id>/metric-thresholds/",
        channels_api.ThresholdList.as_view(),
        name="metric-thresholds",
    ),
    path(
        "teams/<int:id>/metric-thresholds/<int:pk>/",
        channels_api.ThresholdDetail.as_view(),
        name="metric-threshold",
    ),
    path(
        "campaigns/<int:campaign_id>/ledger/",
        views.LedgerEntryList.as_view(),
        name="ledger-list",
    ),
    path(
        "campaigns/<int:campaign_id>/ledger/summary/",
        views.LedgerSummaryView.as_view(),
        name="ledger-summary",
    ),
    path(
        "campaigns/<int:campaign_id>/ledger/<int:pk>/",
        views.LedgerEntryDetail.as_view(),
        name="ledger-detail",
    ),
    path(
        "campaigns/<int:campaign_id>/clone/",
        clone_api.CloneCampaign.as_view(),
        name="campaign-clone",
    ),
    path(
        "campaigns/<int:campaign_id>/alerts/",
        alerts_api.CampaignAlerts.as_view(),
        name="campaign-alerts",
    ),
    path(
        "campaigns/<int:campaign_id>/spend/",
        spend_api.CampaignSpend.as_view(),
        name="campaign-spend",
    ),
    path(
        "campaigns/<int:campaign_id>/deliverables/",
        views.DeliverableList.as_view(),
        name="deliverable-list",
    ),
    path(
        "campaigns/<int:campaign_id>/deliverables/<int:pk>/",
        views.DeliverableDetail.as_view(),
        name="deliverable-detail",
    ),
    path(
        "campaigns/<int:campaign_id>/stages/<int:stage_id>/observed/",
        views.ObservedHoursView.as_view(),
        name="stage-observed",
    ),
    path(
        "campaigns/<int:campaign_id>/reports/",
        views.CampaignReportList.as_view(),
        name="report-list",
    ),
    path("reports/<int:pk>/", views.ReportDetail.as_view(), name="report-detail"),
    path(
        "reports/<int:pk>/html/",
        views.ReportRendering.as_view(),
        {"rendering": "html"},
        name="report-html",
    ),
    path(
        "reports/<int:pk>/markdown/",
        views.ReportRendering.as_view(),
        {"rendering": "markdown"},
        name="report-markdown",
    ),
    path(
        "reports/<int:pk>/json/",
        views.ReportRendering.as_view(),
        {"rendering": "json"},
        name="report-json",
    ),
]
