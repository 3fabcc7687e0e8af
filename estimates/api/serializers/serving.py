"""POST /estimates/serving/: the request (rates, throughput; the model and replica for the KV
cache) and the answer.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from rest_framework import serializers

from campaigns.api.fields import (
    MoneyField,
    StrictBooleanField,
    StrictCharField,
    StrictFloatField,
    StrictIntegerField,
    StrictRegexField,
)
from estimates.api.serializers.base import CURRENCY, MoneySerializer, StrictSerializer, ranged
from estimates.api.serializers.preview import IntervalSerializer
from estimates.domain import formulas


class LocalHardwareSerializer(StrictSerializer):
    purchase_price = MoneyField(max_digits=14, decimal_places=2, min_value=Decimal("0"))
    power_watts = ranged("local.power_watts", help_text="Power drawn while serving.")
    electricity_per_kwh = MoneyField(max_digits=10, decimal_places=4, min_value=Decimal("0"))
    lifetime_months = ranged("local.lifetime_months")


class ServingModelSerializer(StrictSerializer):
    parameters = ranged("model.parameters")
    layers = ranged("model.layers")
    hidden_size = ranged("model.hidden_size")
    attention_heads = ranged("model.attention_heads")
    key_value_heads = ranged("model.key_value_heads", optional=True)
    attention_width = ranged(
        "model.attention_width",
        optional=True,
        help_text="Heads x head size when it is not hidden_size (the KV cache's head size).",
    )
    weight_precision = serializers.ChoiceField(
        choices=formulas.WEIGHT_PRECISIONS,
        default="bf16",
        help_text="How the weights are stored (int4: GPTQ/AWQ, 4.156 bits with its constants).",
    )
    kv_precision = serializers.ChoiceField(
        choices=["fp32", "bf16", "fp16", "fp8", "int8"], default="bf16"
    )


class ServingReplicaSerializer(StrictSerializer):
    gpu = StrictCharField(max_length=60, help_text="A catalog name or alias.")
    context_length = ranged(
        "serving.context_length",
        default=4096,
        help_text="Tokens of context each sequence keeps (prompt + output).",
    )
    batch_size = ranged(
        "serving.batch_size", default=1, help_text="Sequences served at once on a replica."
    )


class ServingRequestSerializer(StrictSerializer):
    requests_per_month = ranged("serving.requests_per_month")
    tokens_per_request = ranged("serving.tokens_per_request")
    tokens_per_second_per_gpu = ranged(
        "serving.tokens_per_second_per_gpu", help_text="Measured serving throughput of one GPU."
    )
    months = ranged("serving.months")
    hourly_rate_per_gpu = MoneyField(
        max_digits=14, decimal_places=4, min_value=Decimal("0"), help_text='e.g. "2.00"'
    )
    currency = StrictRegexField(CURRENCY, default="USD")
    billing = serializers.ChoiceField(
        choices=["busy", "always_on"],
        default="busy",
        help_text="busy: GPU-hours actually serving; always_on: gpus x 730 h a month.",
    )
    gpus = ranged("serving.gpus", default=1)
    training_cost = MoneyField(
        max_digits=16, decimal_places=2, min_value=Decimal("0"), required=False
    )
    local = LocalHardwareSerializer(required=False)
    input_tokens_per_request = ranged(
        "serving.input_tokens_per_request",
        required=False,
        help_text="Prompt tokens per request, priced apart from the output.",
    )
    input_tokens_per_second_per_gpu = ranged(
        "serving.input_tokens_per_second_per_gpu",
        required=False,
        help_text="Measured prefill throughput of one GPU (input tokens).",
    )
    model = ServingModelSerializer(
        required=False, help_text="For the KV cache and the GPUs per replica (with gpu)."
    )
    replica = ServingReplicaSerializer(
        required=False, help_text="The GPU, context and batch one replica serves (with model)."
    )


class LocalServingSerializer(serializers.Serializer[Any]):
    monthly_cost = MoneySerializer()
    cumulative = MoneySerializer(many=True)
    break_even_month = StrictIntegerField(allow_null=True)
    within_lifetime = StrictBooleanField()


class ServingSerializer(serializers.Serializer[Any]):
    tokens_per_month = StrictFloatField()
    gpu_hours_per_month = StrictFloatField(help_text="Busy GPU-hours.")
    billed_hours_per_month = StrictFloatField()
    load = StrictFloatField(help_text="Busy over billed hours (always_on).")
    monthly_cost = MoneySerializer()
    cumulative = MoneySerializer(many=True)
    month_exceeding_training = StrictIntegerField(allow_null=True)
    local = LocalServingSerializer(allow_null=True)
    cost_per_million_output_tokens = MoneySerializer(
        help_text="Output tokens at the measured throughput and the hourly rate."
    )
    cost_per_million_input_tokens = MoneySerializer(
        allow_null=True, help_text="Input tokens at the prefill throughput, when given."
    )
    kv_cache_bytes = StrictIntegerField(allow_null=True, help_text="Per replica (with model).")
    weight_bytes = StrictIntegerField(allow_null=True)
    gpus_per_replica = StrictIntegerField(
        allow_null=True,
        help_text="With model and gpu: the smallest tensor split the heads allow that holds the "
        "weights and cache.",
    )
    tensor_parallel = StrictIntegerField(
        allow_null=True,
        help_text="That tensor split; null when no split divides the heads (pipeline stages).",
    )
    replica_memory_interval = IntervalSerializer(
        allow_null=True,
        help_text="80% range of the replica's weights and cache (docs/domain.md §24.12).",
    )
    recommendations = serializers.ListField(child=StrictCharField())
