from django.urls import path

from estimates.api import calibration as calibration_api
from estimates.api import options_views, scaling_views, serving_views, timeline, views

urlpatterns = [
    path(
        "teams/<int:id>/calibration/",
        calibration_api.TeamCalibration.as_view(),
        name="team-calibration",
    ),
    path("estimates/preview/", views.EstimatePreviewView.as_view(), name="estimate-preview"),
    path(
        "estimates/compute-optimal/",
        scaling_views.ComputeOptimalView.as_view(),
        name="estimate-compute-optimal",
    ),
    path(
        "estimates/hardware-options/",
        options_views.HardwareOptionsView.as_view(),
        name="estimate-hardware-options",
    ),
    path("estimates/serving/", serving_views.ServingView.as_view(), name="estimate-serving"),
    path("estimates/hardware/", views.GpuModelList.as_view(), name="estimate-hardware"),
    path("estimates/plans/", views.RentalPlanList.as_view(), name="estimate-plans"),
    path(
        "campaigns/<int:campaign_id>/hardware-options/",
        views.CampaignHardwareOptions.as_view(),
        name="campaign-hardware-options",
    ),
    path(
        "campaigns/<int:campaign_id>/timeline/",
        timeline.CampaignTimeline.as_view(),
        name="campaign-timeline",
    ),
    path(
        "campaigns/<int:campaign_id>/forecast/",
        views.CampaignForecast.as_view(),
        name="campaign-forecast",
    ),
]
