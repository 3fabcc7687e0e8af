"""The preview's ``model`` object: the parameter count and the optional shape, storage, experts."""

from __future__ import annotations

from rest_framework import serializers

from campaigns.api.fields import StrictBooleanField
from estimates.api.serializers.base import StrictSerializer, ranged
from estimates.domain import formulas


class ModelSpecSerializer(StrictSerializer):
    parameters = ranged("model.parameters", help_text="Parameter count, e.g. 7e9.")
    layers = ranged("model.layers", optional=True)
    hidden_size = ranged("model.hidden_size", optional=True)
    attention_heads = ranged("model.attention_heads", optional=True)
    vocab_size = ranged("model.vocab_size", optional=True)
    largest_layer_parameters = ranged(
        "model.largest_layer_parameters",
        optional=True,
        help_text="Parameters of the largest layer (DeepSpeed ZeRO-3); default vocab x hidden.",
    )
    intermediate_size = ranged(
        "model.intermediate_size",
        optional=True,
        help_text="MLP width (gate/up/down) for the adapter count; default 4 x hidden_size.",
    )
    key_value_heads = ranged(
        "model.key_value_heads",
        optional=True,
        help_text="Grouped-query attention's key/value heads; default attention_heads.",
    )
    weight_precision = serializers.ChoiceField(
        choices=formulas.WEIGHT_PRECISIONS,
        required=False,
        allow_null=True,
        help_text="How the base is stored (lora, qlora); default the training precision, nf4 "
        "for qlora.",
    )
    double_quant = StrictBooleanField(
        default=False, help_text="NF4/FP4 double quantization of the constants (QLoRA)."
    )
    active_parameters = ranged(
        "model.active_parameters",
        optional=True,
        help_text="Mixture-of-experts: parameters one token passes through (default: all).",
    )
    experts = ranged(
        "model.experts", optional=True, help_text="Mixture-of-experts: experts per layer."
    )
    experts_per_token = ranged(
        "model.experts_per_token",
        optional=True,
        help_text="Mixture-of-experts: experts each token is routed to (top-k), for the "
        "all-to-all's bytes; default 1.",
    )
    architecture = serializers.ChoiceField(
        choices=formulas.ARCHITECTURES,
        default="decoder",
        help_text="decoder, or encoder_decoder (T5): layers is then each stack's depth.",
    )
    attention_width = ranged(
        "model.attention_width",
        optional=True,
        help_text="Heads x head size when it is not hidden_size (Gemma 7B: 16 x 256 on 3072).",
    )
    quantization = serializers.ChoiceField(
        choices=formulas.QUANTIZATIONS,
        required=False,
        allow_null=True,
        help_text="The int4 format (weight_precision int4): gptq or awq, groups of 128.",
    )
