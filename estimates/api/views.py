"""The estimates API: the preview calculator, the catalog, and a campaign's forecast and options
(the other calculators: ``scaling_views``, ``serving_views``, ``options_views``).

Access: any signed-in person (token or session) for the calculator; ingest keys are refused
everywhere here (docs/api.md).
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import generics
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from campaigns.api.permissions import campaign_for
from catalog.models import GpuModel, RentalPlan
from estimates.api.calculator import (
    SignedInPerson,
    calculator_schema,
    field_error,
    hardware_spec,
)
from estimates.api.serializers import (
    EstimatePreviewSerializer,
    EstimateResultSerializer,
    ForecastSerializer,
    GpuModelSerializer,
    HardwareOptionsSerializer,
    RentalPlanSerializer,
    options_json,
    result_json,
)
from estimates.domain import formulas
from estimates.models import EstimateStatus
from estimates.selectors.hardware_options import campaign_hardware_options
from estimates.services.forecast import ensure_forecast


class EstimatePreviewView(APIView):
    permission_classes = [SignedInPerson]

    @calculator_schema(
        EstimatePreviewSerializer,
        EstimateResultSerializer,
        "Estimate FLOPs, time, memory per device and cost of one training run",
    )
    def post(self, request: Request) -> Response:
        body = EstimatePreviewSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        gpu = hardware_spec(body.validated_data["hardware"])
        try:
            result = formulas.estimate(body.to_estimate_input(gpu))
        except formulas.EstimateInputError as error:
            raise field_error(error) from None
        precision = body.validated_data["training"]["precision"]
        return Response(result_json(result, gpu, precision))


class CampaignHardwareOptions(APIView):
    """The campaign's items on every catalog GPU, priced with the rental plans and ranked."""

    @extend_schema(
        responses={200: HardwareOptionsSerializer},
        summary="Every GPU/plan that fits the campaign's items, ranked by total cost",
    )
    def get(self, request: Request, campaign_id: int) -> Response:
        campaign = campaign_for(request, campaign_id)
        ranked, excluded = campaign_hardware_options(campaign)
        return Response(options_json(ranked, excluded))


class GpuModelList(generics.ListAPIView[GpuModel]):
    """GPU models. The catalog is shared by every team (it holds no team's data), so it is the
    one listing here that is not scoped to the caller's teams."""

    serializer_class = GpuModelSerializer
    queryset = GpuModel.objects.prefetch_related("hourly_rates").order_by("name")


class RentalPlanList(generics.ListAPIView[RentalPlan]):
    """Rental plans, priced per lot. Shared catalog: not scoped to teams (see GpuModelList)."""

    serializer_class = RentalPlanSerializer
    queryset = RentalPlan.objects.select_related("gpu").order_by("provider", "gpu__name", "id")


class CampaignForecast(APIView):
    """Reserved vs forecast vs observed hours, fits-in-window and plan advice.

    Serves the persisted forecast and says when it is stale (a recompute is queued); the first
    read of a campaign that never had one computes it synchronously.
    """

    @extend_schema(responses={200: ForecastSerializer}, summary="The campaign's forecast")
    def get(self, request: Request, campaign_id: int) -> Response:
        campaign = campaign_for(request, campaign_id)
        estimate = ensure_forecast(campaign=campaign)
        outputs: dict[str, Any] = estimate.outputs if isinstance(estimate.outputs, dict) else {}
        totals = outputs.get("totals", {})
        body = {
            "campaign": campaign.pk,
            "status": estimate.status,
            "stale": estimate.status == EstimateStatus.STALE,
            "stale_since": estimate.stale_since,
            "computed_at": estimate.computed_at,
            "input_version": estimate.input_version,
            "computed_version": estimate.computed_version,
            "error": estimate.error,
            "time_source": estimate.time_source or outputs.get("time_source", "assumed"),
            "window_hours": outputs.get("window_hours"),
            "reserved_basis": outputs.get("reserved_basis", "plan"),
            "reserved_hours": totals.get("reserved_hours"),
            "forecast_hours": totals.get("forecast_hours"),
            "observed_hours": totals.get("observed_hours"),
            "fits_in_window": outputs.get("fits_in_window"),
            "uncommitted_hours": outputs.get("uncommitted_hours"),
            "over_hours": outputs.get("over_hours"),
            "totals": totals,
            "items": outputs.get("items", []),
            "time_sources": outputs.get("time_sources", {}),
            "critical_path": outputs.get("critical_path", []),
            "lots": outputs.get("lots", {}),
            "advice": outputs.get("advice", []),
            "figures": outputs.get("figures", {}),
        }
        return Response(body)
