"""The sizes a training step's collectives move, per GPU: gradients, weights, activations,
routed tokens, key/value blocks, and how many micro-batches and optimizer steps there are.

Rules (docs/domain.md §24.6, §24.10): gradients are the trainable parameters this
model-parallel rank holds, 16-bit in mixed precision (4 bytes in fp32); a mixture-of-experts
splits them into the shared part (every data-parallel rank) and the experts (divided by
expert_parallel). Weights gathered by ZeRO-3 are those a rank holds, as stored. One optimizer
step is micro_batch x accumulation x data-parallel replicas sequences.
Units: bytes, counts.
"""

from __future__ import annotations

from dataclasses import dataclass

from estimates.domain.formulas.adapters import frozen_base_bytes, trainable_parameters
from estimates.domain.formulas.layout import Layout
from estimates.domain.formulas.shape import attention_width, kv_width, stack_layers
from estimates.domain.formulas.specs import EstimateInput, samples_per_epoch, tokens_per_epoch
from estimates.domain.formulas.work import active_parameters, memory_parameters


@dataclass(frozen=True)
class StepShape:
    accumulation: int
    steps: float
    global_batch: float
    zero_stage: int
    recompute: bool
    dense_gradient_bytes: float
    expert_gradient_bytes: float
    weight_bytes: float
    layers_per_stage: int
    activation_bytes: float
    routed_bytes: float
    kv_block_bytes: float
    attention_share: float


def step_shape(inp: EstimateInput, layout: Layout) -> StepShape:
    """The step's buffers on ``layout`` (docs/domain.md §24.6)."""
    model, training = inp.model, inp.training
    model_parallel = layout.tensor * layout.pipeline
    grad = 4.0 if training.precision in ("fp32", "tf32") else 2.0
    dense, experts = _gradient_parameters(inp, layout)
    tokens = training.micro_batch_size * training.sequence_length / layout.context
    hidden = model.hidden_size or 0
    layers = stack_layers(model)
    global_batch = (
        training.micro_batch_size
        * training.gradient_accumulation_steps
        * max(1, layout.data // layout.context)
    )
    routed = model.experts_per_token or 1
    return StepShape(
        accumulation=training.gradient_accumulation_steps,
        steps=_optimizer_steps(inp, global_batch),
        global_batch=float(global_batch),
        zero_stage=inp.hardware.zero_stage,
        recompute=training.activation_checkpointing,
        dense_gradient_bytes=dense / model_parallel * grad,
        expert_gradient_bytes=experts / model_parallel * grad,
        weight_bytes=_weight_bytes(inp) / model_parallel,
        layers_per_stage=max(1, -(-layers // layout.pipeline)) if layers else 1,
        activation_bytes=tokens * hidden * 2.0,
        routed_bytes=tokens * routed * hidden * 2.0 if model.experts else 0.0,
        kv_block_bytes=tokens * kv_width(model) * 2.0 * 2.0,
        attention_share=_attention_share(inp),
    )


def _gradient_parameters(inp: EstimateInput, layout: Layout) -> tuple[float, float]:
    """Trainable parameters reduced over every data-parallel rank, and the experts' (already
    divided by expert_parallel: each rank reduces only the experts it holds)."""
    model, training = inp.model, inp.training
    trainable = trainable_parameters(model, training)
    if training.method != "full" or not model.experts or layout.expert <= 1:
        return trainable, 0.0
    shared = active_parameters(model)
    return shared, (model.parameters - shared) / layout.expert


def _weight_bytes(inp: EstimateInput) -> float:
    """The weights one expert-parallel rank holds, as stored (16-bit; an adapter's base at its
    storage precision)."""
    held = memory_parameters(inp)
    if inp.training.method != "full":
        return float(frozen_base_bytes(inp.model, inp.training, held))
    return held * (4.0 if inp.training.precision in ("fp32", "tf32") else 2.0)


def _attention_share(inp: EstimateInput) -> float:
    """Attention's share of a token's FLOPs (PaLM's 12 L w s against 6 N)."""
    model = inp.model
    if not (model.layers and model.hidden_size):
        return 0.0
    attention = 12.0 * stack_layers(model) * attention_width(model) * inp.training.sequence_length
    return attention / (attention + 6.0 * active_parameters(model))


def _optimizer_steps(inp: EstimateInput, global_batch: int) -> float:
    """Optimizer steps of the run: samples over the global batch (tokens over its tokens)."""
    training = inp.training
    tokens = tokens_per_epoch(training) * training.epochs
    if tokens > 0:
        return max(1.0, tokens / (global_batch * training.sequence_length))
    samples = samples_per_epoch(training) * training.epochs
    return max(1.0, samples / global_batch) if samples > 0 else 1.0
