"""The estimates API: the stateless calculator, the catalog, and a campaign's forecast.

Access: any signed-in person (token or session). Ingest keys are refused everywhere here: an
ingest key may only append run data to its campaign (docs/api.md), and none of this is run data.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from decimal import Decimal
from typing import Any, TypeVar

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import generics, permissions, serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from campaigns.api.authentication import is_ingest
from campaigns.api.permissions import INGEST_ONLY, campaign_for
from catalog.domain import catalog
from catalog.models import GpuModel, RentalPlan
from estimates.api.serializers import (
    ComputeOptimalRequestSerializer,
    ComputeOptimalSerializer,
    CustomHardwareSerializer,
    EstimatePreviewSerializer,
    EstimateResultSerializer,
    ForecastSerializer,
    GpuModelSerializer,
    HardwareOptionsRequestSerializer,
    HardwareOptionsSerializer,
    RentalPlanSerializer,
    ServingRequestSerializer,
    ServingSerializer,
    estimate_input,
    options_json,
    result_json,
)
from estimates.domain import formulas
from estimates.domain import hardware_options as options
from estimates.domain.formulas.levers import precision_speedup
from estimates.forecasts import ensure_forecast
from estimates.models import EstimateStatus, plan_offer
from estimates.selectors.hardware_options import campaign_hardware_options, published_rates


class SignedInPerson(permissions.BasePermission):
    """Any authenticated user, whatever their role: the calculator reads and writes nothing, so
    a viewer may use it too (the default TeamRole would ask POSTs for a planner)."""

    message = INGEST_ONLY

    def has_permission(self, request: Request, view: Any) -> bool:
        user = request.user
        return bool(user and user.is_authenticated and not is_ingest(user))


def nested_error(dotted: str, message: str) -> dict[str, Any]:
    """ "hardware.utilization" → {"hardware": {"utilization": [message]}}: DRF's nested shape."""
    detail: Any = [message]
    for part in reversed(dotted.split(".")):
        detail = {part: detail}
    return dict(detail)


_F = TypeVar("_F", bound=Callable[..., Any])


def field_error(error: formulas.EstimateInputError) -> serializers.ValidationError:
    """The formulas' refusal as a 400 naming its field in DRF's nested shape."""
    return serializers.ValidationError(nested_error(error.field, error.message))


def calculator_schema(body: type[Any], result: type[Any], summary: str) -> Callable[[_F], _F]:
    """A calculator endpoint's schema: the body it reads, its result, and 400 naming the field."""
    return extend_schema(
        request=body,
        responses={200: result, 400: OpenApiResponse(description="Field errors")},
        summary=summary,
    )


def catalog_gpu(name: str, field: str, hint: str = "") -> catalog.GpuModel:
    """The catalog's GPU named ``name`` (or an alias of it); an unknown name is a 400 naming
    ``field`` with the names known, and ``hint`` after them."""
    row = GpuModel.objects.lookup(name)
    if row is None:
        known = ", ".join(GpuModel.objects.values_list("name", flat=True))
        raise serializers.ValidationError(
            nested_error(field, f"unknown GPU model {name!r}; known: {known}{hint}")
        )
    return row.as_spec()


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


def hardware_spec(hardware: dict[str, Any], field: str = "hardware.gpu") -> catalog.GpuModel:
    """The accelerator a validated ``hardware`` section names: custom, or a catalog row (by
    name or alias); an unknown name is a 400 naming ``field``."""
    if "custom" in hardware:
        return CustomHardwareSerializer().as_spec(hardware["custom"])
    return catalog_gpu(hardware["gpu"], field, "; or describe it in hardware.custom")


class ComputeOptimalView(APIView):
    """Chinchilla's compute-optimal split from FLOPs, parameters or a money budget, with the
    Kaplan levers (formulas.chinchilla_fit, formulas.scaling_levers; docs/api.md)."""

    permission_classes = [SignedInPerson]

    @calculator_schema(
        ComputeOptimalRequestSerializer,
        ComputeOptimalSerializer,
        "Compute-optimal parameters and tokens (Chinchilla table 3), and scaling levers",
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
            speedup, basis = None, ""
            if gpu is not None and lower is not None and budget is not None:
                # The measured speed-up where there is one (docs/domain.md §24.7).
                speedup, basis = precision_speedup(gpu, budget["precision"], lower)
            levers = formulas.scaling_levers(
                split.parameters,
                split.tokens,
                epochs=data["epochs"],
                precision_speedup=speedup,
                lower_precision=lower,
                speedup_basis=basis,
            )
        except formulas.EstimateInputError as error:
            raise field_error(error) from None
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
    spec = catalog_gpu(budget["gpu"], "budget.gpu")
    if not spec.supports(budget["precision"]):
        raise serializers.ValidationError(
            nested_error(
                "budget.precision",
                f"the {spec.name} has no {budget['precision']} figure; it offers "
                f"{', '.join(spec.peak_flops)}",
            )
        )
    return spec


class ServingView(APIView):
    """Serving cost by month, when it passes training, and local vs cloud
    (formulas.serving_projection; docs/api.md)."""

    permission_classes = [SignedInPerson]

    @calculator_schema(
        ServingRequestSerializer,
        ServingSerializer,
        "Inference cost over months, and owning vs renting",
    )
    def post(self, request: Request) -> Response:
        body = ServingRequestSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        local = data.get("local") or {}
        try:
            result = formulas.serving_projection(
                requests_per_month=data["requests_per_month"],
                tokens_per_request=data["tokens_per_request"],
                tokens_per_second_per_gpu=data["tokens_per_second_per_gpu"],
                months=data["months"],
                hourly_rate_per_gpu=data["hourly_rate_per_gpu"],
                billing=data["billing"],
                gpus=data["gpus"],
                training_cost=data.get("training_cost"),
                purchase_price=local.get("purchase_price"),
                power_watts=local.get("power_watts"),
                electricity_per_kwh=local.get("electricity_per_kwh"),
                lifetime_months=local.get("lifetime_months"),
            )
        except formulas.EstimateInputError as error:
            field = error.field
            if field in ("purchase_price", "power_watts"):
                field = f"local.{field}"
            raise serializers.ValidationError(nested_error(field, error.message)) from None
        currency = data["currency"]

        def money(amount: Decimal) -> dict[str, str]:
            return {"amount": str(amount), "currency": currency}

        extras, extra_words = _serving_extras(data, money)

        words = [
            f"{result.tokens_per_month:,.0f} tokens a month take {result.gpu_hours_per_month:,.1f} "
            f"busy GPU-hours; billed {result.billed_hours_per_month:,.1f} h: "
            f"{result.monthly_cost} {currency} a month."
        ]
        if data["billing"] == "always_on" and result.load > 1:
            words.append(
                f"The load needs {result.load:.2f}x the GPUs kept on: add GPUs, or requests queue."
            )
        if result.month_exceeding_training is not None:
            words.append(
                f"Serving passes the training cost in month {result.month_exceeding_training}: "
                "train once, serve many."
            )
        if result.local is not None:
            even = result.local.break_even_month
            words.append(
                "Owning never pays off at this load."
                if even is None
                else f"Owning pays off from month {even}"
                + ("" if result.local.within_lifetime else ", after the hardware's lifetime")
                + "."
            )
        words.extend(extra_words)
        return Response(
            {
                "tokens_per_month": result.tokens_per_month,
                "gpu_hours_per_month": result.gpu_hours_per_month,
                "billed_hours_per_month": result.billed_hours_per_month,
                "load": result.load,
                "monthly_cost": money(result.monthly_cost),
                "cumulative": [money(a) for a in result.cumulative],
                "month_exceeding_training": result.month_exceeding_training,
                **extras,
                "local": None
                if result.local is None
                else {
                    "monthly_cost": money(result.local.monthly_cost),
                    "cumulative": [money(a) for a in result.local.cumulative],
                    "break_even_month": result.local.break_even_month,
                    "within_lifetime": result.local.within_lifetime,
                },
                "recommendations": words,
            }
        )


def _serving_extras(data: dict[str, Any], money: Any) -> tuple[dict[str, Any], list[str]]:
    """Cost per million output tokens (input apart), KV cache and GPUs per replica
    (docs/domain.md §24.8)."""
    rate = data["hourly_rate_per_gpu"]
    try:
        output = formulas.cost_per_million_tokens(rate, data["tokens_per_second_per_gpu"])
        prefill = data.get("input_tokens_per_second_per_gpu")
        input_cost = None if prefill is None else formulas.cost_per_million_tokens(rate, prefill)
    except formulas.EstimateInputError as error:
        raise serializers.ValidationError({"hourly_rate_per_gpu": [error.message]}) from None
    words = [
        f"A million output tokens cost {output} {data['currency']} at "
        f"{data['tokens_per_second_per_gpu']:,.0f} tokens/s per GPU"
        + (
            f"; a million input tokens {input_cost} at {prefill:,.0f} tokens/s of prefill."
            if input_cost is not None and prefill is not None
            else "; input tokens are priced apart once a prefill throughput is given."
        )
    ]
    extras: dict[str, Any] = {
        "cost_per_million_output_tokens": money(output),
        "cost_per_million_input_tokens": None if input_cost is None else money(input_cost),
        "kv_cache_bytes": None,
        "weight_bytes": None,
        "gpus_per_replica": None,
    }
    model, replica_spec = data.get("model"), data.get("replica")
    if model is None or replica_spec is None:
        return extras, words
    heads = model["attention_heads"]
    kv = formulas.kv_cache_bytes(
        model["layers"],
        model.get("key_value_heads") or heads,
        model["hidden_size"] / heads,
        replica_spec["context_length"],
        replica_spec["batch_size"],
        model["kv_precision"],
    )
    weights = math.ceil(
        model["parameters"] * formulas.bits_per_weight(model["weight_precision"], False) / 8
    )
    gpu = hardware_spec({"gpu": replica_spec["gpu"]}, field="replica.gpu")
    replica = formulas.gpus_per_replica(weights, kv, gpu.memory_bytes)
    extras = {**extras, "kv_cache_bytes": kv, "weight_bytes": weights, "gpus_per_replica": replica}
    words.append(
        f"One replica holds {weights / 2**30:,.1f} GiB of weights and {kv / 2**30:,.1f} GiB of KV "
        f"cache ({replica_spec['batch_size']} x {replica_spec['context_length']:,} tokens): "
        f"{replica} {gpu.name} per replica (90% of each GPU's memory)."
    )
    return extras, words


class HardwareOptionsView(APIView):
    """Which GPU and which plan is cheapest for this job (estimates.domain.hardware_options;
    docs/api.md)."""

    permission_classes = [SignedInPerson]

    @calculator_schema(
        HardwareOptionsRequestSerializer,
        HardwareOptionsSerializer,
        "Every catalog GPU (and custom accelerator) that fits the job, ranked by cost",
    )
    def post(self, request: Request) -> Response:
        body = HardwareOptionsRequestSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = dict(body.validated_data)
        own = hardware_spec(data["hardware"])
        candidates = [row.as_spec() for row in GpuModel.objects.order_by("name")]
        if "custom" in data["hardware"]:
            candidates.append(own)
        pilot = data.get("pilot")
        pilot_gpu = own
        if pilot and pilot.get("gpu"):
            pilot_gpu = hardware_spec({"gpu": pilot["gpu"]}, field="pilot.gpu")
        if pilot and all(c.name != pilot_gpu.name for c in candidates):
            candidates.append(pilot_gpu)  # the GPU the pilot ran on is always an option
        precision = data["training"]["precision"]
        try:
            mfu = None
            if pilot:
                measured = formulas.estimate(estimate_input(data, pilot_gpu))
                mfu = measured.mfu
                if mfu > 1:
                    raise formulas.EstimateInputError(
                        "pilot.tokens_per_second",
                        f"implies {100 * mfu:.0f}% of the {pilot_gpu.name}'s peak, which is "
                        "impossible",
                    )
            works, excluded = [], []
            for candidate in candidates:
                work, reason = _option_work(data, candidate, pilot_gpu, mfu, precision)
                if work is None:
                    excluded.append(options.Excluded(candidate.name, reason))
                else:
                    works.append((work, candidate))
        except formulas.EstimateInputError as error:
            raise field_error(error) from None
        cost = data.get("cost") or {}
        offers = [plan_offer(p) for p in RentalPlan.objects.select_related("gpu")]
        currency = cost.get("currency", "USD")
        offers = [o for o in offers if o.currency == currency]
        # The caller's rates first; without a rate of the caller's own, the catalog's published
        # hourly rates, with their provenance (docs/domain.md §24.8).
        rates, notes, instances = (
            ({}, {}, {}) if cost.get("hourly_rate_per_gpu") else published_rates(currency)
        )
        rates = {**rates, **(data.get("rates") or {})}
        for given in data.get("rates") or {}:
            # The caller's own rate (by name or alias): their terms, not the provider's.
            for name in {given, catalog.canonical_name(given) or given}:
                notes.pop(name, None)
                instances.pop(name, None)
        ranked: list[options.HardwareOption] = []
        for work, candidate in works:
            found, _ = options.rank_options(
                [work],
                [candidate],
                offers=offers,
                rates=rates,
                rate_notes=notes,
                rate_instances=instances,
                fallback_rate=cost.get("hourly_rate_per_gpu"),
                currency=currency,
                window_hours=data.get("window_hours"),
                measured_on={work.key: pilot_gpu.name} if pilot else None,
            )
            ranked.extend(found)
        ranked.sort(key=options.ranking)
        return Response(options_json(ranked, excluded))


def _option_work(
    data: dict[str, Any],
    candidate: catalog.GpuModel,
    pilot_gpu: catalog.GpuModel,
    mfu: float | None,
    precision: str,
) -> tuple[options.Work | None, str]:
    """The job on ``candidate``: from the pilot where it ran, else the pilot's MFU carried to
    this GPU's peak ("projected"), else the assumed utilization; None with the reason when the
    GPU lacks the precision or the memory."""
    if not candidate.supports(precision):
        return None, f"no {precision} peak"
    changed = dict(data)
    source: options.TimeSource = "assumed"
    if mfu is not None:
        if candidate.name == pilot_gpu.name:
            source = "pilot"
        else:
            changed["pilot"] = None
            changed["hardware"] = {
                **data["hardware"],
                "utilization": min(max(mfu, 0.001), 1.0),
                "utilization_kind": "mfu",
            }
            source = "projected"
    result = formulas.estimate(estimate_input(changed, candidate))
    wall_hours = result.wall_hours
    comm = result.communication
    if source == "projected" and comm is not None and comm.scaling_efficiency < 1:
        # The pilot's MFU already includes the communication it met: carried as it is, the
        # candidate's own exposed communication is not added again (docs/domain.md §24.6).
        wall_hours = result.training_wall_hours * comm.scaling_efficiency + result.overhead_hours
    ran_here = mfu is not None and candidate.name == pilot_gpu.name
    if not result.fits_in_memory and not ran_here:  # a pilot ran there: it fits
        return None, (
            f"needs {result.memory.total / 2**30:,.1f} GiB per device, has "
            f"{candidate.memory_bytes / 2**30:,.1f} GiB"
        )
    work = options.Work(
        key="job",
        name="the job",
        gpu=candidate.name,
        wall_hours=wall_hours,
        gpus=data["hardware"]["count"],
        precision=precision,
        memory_bytes_per_gpu=result.memory.total,
        time_source=source,
    )
    return work, ""


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
        estimate = ensure_forecast(campaign)
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
