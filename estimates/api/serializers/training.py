"""The preview's ``training``, ``pilot`` and ``overheads`` objects: the work, how it runs, and
what a pilot measured.
"""

from __future__ import annotations

from rest_framework import serializers

from campaigns.api.fields import StrictBooleanField
from estimates.api.serializers.base import StrictSerializer, ranged
from estimates.api.serializers.fine_tuning import LoraSerializer
from estimates.domain import formulas


class TrainingSpecSerializer(StrictSerializer):
    tokens = ranged(
        "training.tokens",
        optional=True,
        help_text="Tokens per epoch; or samples + tokens_per_sample.",
    )
    samples = ranged("training.samples", optional=True)
    tokens_per_sample = ranged("training.tokens_per_sample", optional=True)
    epochs = ranged("training.epochs", default=1.0)
    sequence_length = ranged("training.sequence_length", default=2048)
    micro_batch_size = ranged("training.micro_batch_size", default=1)
    precision = serializers.ChoiceField(choices=formulas.PRECISIONS, default="bf16")
    optimizer = serializers.ChoiceField(choices=formulas.OPTIMIZERS, default="adamw")
    activation_checkpointing = StrictBooleanField(default=False)
    flash_attention = StrictBooleanField(default=False)
    method = serializers.ChoiceField(
        choices=formulas.METHODS,
        default="full",
        help_text="full (default), lora or qlora (docs/domain.md §24.1).",
    )
    lora = LoraSerializer(required=False, allow_null=True, help_text="Rank and target modules.")
    trainable_parameters = ranged(
        "training.trainable_parameters",
        optional=True,
        help_text="The trainable count given directly (overrides the one from the shape).",
    )
    flops_per_sample = ranged(
        "training.flops_per_sample",
        optional=True,
        help_text="Forward FLOPs of one sample, for models that are not transformers (with "
        "samples).",
    )
    activation_bytes_per_sample = ranged(
        "training.activation_bytes_per_sample",
        optional=True,
        help_text="Activation bytes one sample keeps for the backward pass on a device, as "
        "measured for the run's checkpointing and precision (CNNs, LSTMs; docs/domain.md §24.5); "
        "overrides the transformer formula.",
    )
    gradient_accumulation_steps = ranged(
        "training.gradient_accumulation_steps",
        default=1,
        help_text="Micro-batches per optimizer step: the global batch is micro_batch_size x this "
        "x the data-parallel replicas; memory follows the micro-batch (docs/domain.md §24.10).",
    )
    loss = serializers.ChoiceField(
        choices=formulas.LOSSES,
        required=False,
        allow_null=True,
        help_text="How the loss meets the logits: standard (about 16 bytes a logit), chunked "
        "(torchtune's, 5.25) or fused (Liger, Cut Cross-Entropy: none); default standard.",
    )
    chunked_loss = StrictBooleanField(
        required=False,
        allow_null=True,
        help_text="The older switch: true is loss chunked, false standard (loss wins).",
    )


class PilotSpecSerializer(StrictSerializer):
    tokens_per_second = ranged("pilot.tokens_per_second", optional=True)
    samples_per_second = ranged("pilot.samples_per_second", optional=True)
    gpus = ranged(
        "pilot.gpus", optional=True, help_text="GPUs the pilot ran on (default: hardware.count)."
    )
    sequence_length = ranged(
        "pilot.sequence_length",
        optional=True,
        help_text="The sequence length the pilot ran at (default: the training's).",
    )
    micro_batch_size = ranged(
        "pilot.micro_batch_size",
        optional=True,
        help_text="The pilot's micro-batch (default: the training's): its communication per "
        "step is counted at it.",
    )


class OverheadsSerializer(StrictSerializer):
    loading_hours = ranged("overheads.loading_hours", default=0.0)
    long_input_hours = ranged("overheads.long_input_hours", default=0.0)
    validation_fraction = ranged("overheads.validation_fraction", default=0.0)
    output_hours = ranged("overheads.output_hours", default=0.0)
    checkpoint_hours = ranged("overheads.checkpoint_hours", default=0.0)
