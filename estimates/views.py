"""The estimates API: the stateless calculator, the catalog, and a campaign's forecast.

Access: any signed-in person (token or session). Ingest keys are refused everywhere here: an
ingest key may only append run data to its campaign (API.md), and none of this is run data.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import generics, permissions, serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from campaigns.authentication import is_ingest
from campaigns.permissions import campaign_for

from . import catalog, formulas
from .forecasts import current_estimate
from .models import EstimateStatus, GpuModel, RentalPlan
from .serializers import (
    ComputeOptimalRequestSerializer,
    ComputeOptimalSerializer,
    CustomHardwareSerializer,
    EstimatePreviewSerializer,
    EstimateResultSerializer,
    ForecastSerializer,
    GpuModelSerializer,
    RentalPlanSerializer,
    result_json,
)


class SignedInPerson(permissions.BasePermission):
    """Any authenticated user, whatever their role: the calculator reads and writes nothing, so
    a viewer may use it too (the default TeamRole would ask POSTs for a planner)."""

    message = "An ingest key may only append run data to its one campaign."

    def has_permission(self, request: Request, view: Any) -> bool:
        user = request.user
        return bool(user and user.is_authenticated and not is_ingest(user))


def nested_error(dotted: str, message: str) -> dict[str, Any]:
    """ "hardware.utilization" → {"hardware": {"utilization": [message]}}: DRF's nested shape."""
    detail: Any = [message]
    for part in reversed(dotted.split(".")):
        detail = {part: detail}
    return dict(detail)


class EstimatePreviewView(APIView):
    permission_classes = [SignedInPerson]

    @extend_schema(
        request=EstimatePreviewSerializer,
        responses={200: EstimateResultSerializer, 400: OpenApiResponse(description="Field errors")},
        summary="Estimate FLOPs, time, memory per device and cost of one training run",
    )
    def post(self, request: Request) -> Response:
        body = EstimatePreviewSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        gpu = hardware_spec(body.validated_data["hardware"])
        try:
            result = formulas.estimate(body.to_estimate_input(gpu))
        except formulas.EstimateInputError as error:
            raise serializers.ValidationError(nested_error(error.field, error.message)) from None
        precision = body.validated_data["training"]["precision"]
        return Response(result_json(result, gpu, precision))


def hardware_spec(hardware: dict[str, Any]) -> catalog.GpuModel:
    """The accelerator a validated ``hardware`` section names: custom, or a catalog row (by
    name or alias); an unknown name is a 400 naming hardware.gpu."""
    if "custom" in hardware:
        return CustomHardwareSerializer().as_spec(hardware["custom"])
    name = hardware["gpu"]
    row = GpuModel.objects.lookup(name)
    if row is None:
        known = ", ".join(GpuModel.objects.values_list("name", flat=True))
        raise serializers.ValidationError(
            nested_error(
                "hardware.gpu",
                f"unknown GPU model {name!r}; known: {known}; or describe it in hardware.custom",
            )
        )
    return row.as_spec()


class ComputeOptimalView(APIView):
    """Chinchilla's compute-optimal split from FLOPs, parameters or a money budget, with the
    Kaplan levers (formulas.chinchilla_fit, formulas.scaling_levers; docs/api.md)."""

    permission_classes = [SignedInPerson]

    @extend_schema(
        request=ComputeOptimalRequestSerializer,
        responses={200: ComputeOptimalSerializer, 400: OpenApiResponse(description="Field errors")},
        summary="Compute-optimal parameters and tokens (Chinchilla table 3), and scaling levers",
    )
    def post(self, request: Request) -> Response:
        body = ComputeOptimalRequestSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        budget, budget_json, gpu = data.get("budget"), None, None
        flops = data.get("flops")
        if budget is not None:
            gpu = _budget_gpu(budget)
            hours_amount = budget["amount"] / budget["hourly_rate_per_gpu"]
            gpu_hours = float(hours_amount)
            flops = gpu_hours * 3600.0 * gpu.peak_flops[budget["precision"]] * budget["utilization"]
            budget_json = {
                "gpu": gpu.name,
                "precision": budget["precision"],
                "gpu_hours": gpu_hours,
                "cost": {"amount": str(budget["amount"]), "currency": budget["currency"]},
            }
            lower = formulas.lower_precision(gpu, budget["precision"])
        else:
            lower = None
        try:
            if budget is not None and flops is not None and flops > 1e32:
                raise formulas.EstimateInputError(
                    "budget.amount", f"buys {flops:.3g} FLOPs, beyond the 1e32 handled"
                )
            split = formulas.chinchilla_fit(flops=flops, parameters=data.get("parameters"))
            speedup = None
            if gpu is not None and lower is not None and budget is not None:
                speedup = gpu.peak_flops[lower] / gpu.peak_flops[budget["precision"]]
            levers = formulas.scaling_levers(
                split.parameters,
                split.tokens,
                epochs=data["epochs"],
                precision_speedup=speedup,
                lower_precision=lower,
            )
        except formulas.EstimateInputError as error:
            raise serializers.ValidationError(nested_error(error.field, error.message)) from None
        total = 6.0 * split.parameters * split.tokens
        return Response(
            {
                "parameters": split.parameters,
                "tokens": split.tokens,
                "flops": total,
                "tokens_per_parameter": split.tokens / split.parameters,
                "pf_days": total / 8.64e19,
                "budget": budget_json,
                "source": (
                    "Hoffmann et al. (2022), Chinchilla, table 3 (N_opt = 0.0993 C^0.498, fitted); "
                    "levers: Kaplan et al. (2020), L ~ N^-0.076, D^-0.095 (projections)"
                ),
                "levers": [
                    {
                        "name": lever.name,
                        "description": lever.description,
                        "flops": lever.flops,
                        "cost_ratio": lever.cost_ratio,
                        "cost": None
                        if budget is None
                        else {
                            "amount": str(
                                formulas.scaled_amount(budget["amount"], lever.cost_ratio)
                            ),
                            "currency": budget["currency"],
                        },
                        "loss_ratio": lever.loss_ratio,
                        "projection": lever.projection,
                    }
                    for lever in levers
                ],
            }
        )


def _budget_gpu(budget: dict[str, Any]) -> catalog.GpuModel:
    row = GpuModel.objects.lookup(budget["gpu"])
    if row is None:
        known = ", ".join(GpuModel.objects.values_list("name", flat=True))
        raise serializers.ValidationError(
            nested_error("budget.gpu", f"unknown GPU model {budget['gpu']!r}; known: {known}")
        )
    spec = row.as_spec()
    if not spec.supports(budget["precision"]):
        raise serializers.ValidationError(
            nested_error(
                "budget.precision",
                f"the {spec.name} has no {budget['precision']} figure; it offers "
                f"{', '.join(spec.peak_flops)}",
            )
        )
    return spec


class GpuModelList(generics.ListAPIView[GpuModel]):
    """GPU models. The catalog is shared by every team (it holds no team's data), so it is the
    one listing here that is not scoped to the caller's teams."""

    serializer_class = GpuModelSerializer
    queryset = GpuModel.objects.order_by("name")


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
        estimate = current_estimate(campaign)
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
        }
        return Response(body)
