"""POST /estimates/serving/: serving cost by month, per million tokens, and the GPUs a replica
needs in a tensor split the model's heads allow (docs/domain.md §10, §24.8)."""

from __future__ import annotations

import dataclasses
import math
from decimal import Decimal
from typing import Any

from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from estimates.api.calculator import (
    SignedInPerson,
    calculator_schema,
    hardware_spec,
    nested_error,
)
from estimates.api.serializers import ServingRequestSerializer, ServingSerializer
from estimates.domain import formulas
from estimates.domain.formulas.serving import tensor_split


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
        result = _projection(data)
        currency = data["currency"]

        def money(amount: Decimal) -> dict[str, str]:
            return {"amount": str(amount), "currency": currency}

        extras, extra_words = _serving_extras(data, money)
        local = result.local
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
                if local is None
                else {
                    "monthly_cost": money(local.monthly_cost),
                    "cumulative": [money(a) for a in local.cumulative],
                    "break_even_month": local.break_even_month,
                    "within_lifetime": local.within_lifetime,
                },
                "recommendations": _words(data, result) + extra_words,
            }
        )


def _projection(data: dict[str, Any]) -> formulas.ServingProjection:
    local = data.get("local") or {}
    try:
        return formulas.serving_projection(
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


def _words(data: dict[str, Any], result: formulas.ServingProjection) -> list[str]:
    words = [
        f"{result.tokens_per_month:,.0f} tokens a month take {result.gpu_hours_per_month:,.1f} "
        f"busy GPU-hours; billed {result.billed_hours_per_month:,.1f} h: "
        f"{result.monthly_cost} {data['currency']} a month."
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
    return words


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
        "tensor_parallel": None,
        "replica_memory_interval": None,
    }
    model, replica_spec = data.get("model"), data.get("replica")
    if model is None or replica_spec is None:
        return extras, words
    replica, line = _replica(model, replica_spec)
    words.append(line)
    return {**extras, **replica}, words


def _replica(model: dict[str, Any], spec: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """KV cache, weights and GPUs per replica in a tensor split the heads allow (§24.8)."""
    heads = model["attention_heads"]
    kv_heads = model.get("key_value_heads") or heads
    width = model.get("attention_width") or model["hidden_size"]
    kv = formulas.kv_cache_bytes(
        model["layers"],
        kv_heads,
        width / heads,
        spec["context_length"],
        spec["batch_size"],
        model["kv_precision"],
    )
    weights = math.ceil(
        model["parameters"] * formulas.bits_per_weight(model["weight_precision"], False) / 8
    )
    gpu = hardware_spec({"gpu": spec["gpu"]}, field="replica.gpu")
    needed = formulas.gpus_per_replica(weights, kv, gpu.memory_bytes)
    split = tensor_split(needed, heads, kv_heads)
    gpus = split or needed
    how = (
        f"a tensor split of {gpus} (it divides the {heads} heads)"
        if split is not None
        else f"{needed} GPUs: no tensor split up to {heads} divides the heads, so pipeline stages"
    )
    line = (
        f"One replica holds {weights / 2**30:,.1f} GiB of weights and {kv / 2**30:,.1f} GiB of KV "
        f"cache ({spec['batch_size']} x {spec['context_length']:,} tokens): memory needs "
        f"{needed} {gpu.name} (90% of each GPU's memory), served as {how}."
    )
    held = formulas.interval(float(weights + kv), "memory")
    return {
        "kv_cache_bytes": kv,
        "weight_bytes": weights,
        "gpus_per_replica": gpus,
        "tensor_parallel": split,
        "replica_memory_interval": dataclasses.asdict(held),
    }, line
