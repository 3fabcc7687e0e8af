"""What one run computes: model and executed FLOPs by training method, experts and sequence length.

Rules (docs/domain.md §24.1, §24.3-§24.5):

* Full training: 6 N per token (forward 2N, backward 4N; Kaplan et al. 2020), plus PaLM's
  attention term 12 L h s when the architecture is known (Chowdhery et al. 2022, appendix B).
* Adapters (lora, qlora): the base is frozen, so there are no weight gradients for it: forward
  2N, the activation-gradient pass 2N, and the adapter's own forward, activation- and
  weight-gradient terms 6 T (T trainable). Attention has no weights: its forward and backward
  stay, counted causal, 6 L h s (half of PaLM's term: FlashAttention skips the masked half).
* Mixture-of-experts: N is the active count (``model.active_parameters``), the parameters one
  token passes through (DeepSeek-V3: 37B of 671B).
* Any architecture: ``training.flops_per_sample`` is the forward FLOPs of one sample (a CNN's
  published GFLOPs per image); training is 3x that (backward = 2x forward).
* Full recomputation executes one more forward pass: HFU counts it, MFU does not.
* A pilot measured at one sequence length is carried to another by the ratio of per-token
  work at each: the dense FLOPs plus the causal attention FLOPs weighted x2, because attention
  kernels run at about half the dense-matmul efficiency (this equals PaLM's full-attention
  term; NVIDIA's long-sequence table is reproduced within 10% with it, §24.4).

Units: FLOPs (float), FLOPs per token or per sample.
"""

from __future__ import annotations

from dataclasses import dataclass

from estimates.domain.formulas.adapters import trainable_parameters
from estimates.domain.formulas.flops import RECOMPUTE_FLOPS_FACTOR
from estimates.domain.formulas.specs import (
    EstimateInput,
    ModelSpec,
    TrainingSpec,
    samples_per_epoch,
    tokens_per_epoch,
)


@dataclass(frozen=True)
class RunWork:
    """The run's work: the 6PT-style headline, model FLOPs (MFU), executed FLOPs (HFU)."""

    training_flops: float
    model_flops: float
    executed_flops: float
    tokens: float
    samples: float


def active_parameters(model: ModelSpec) -> float:
    """The parameters one token passes through: all of them unless experts are routed."""
    return model.active_parameters if model.active_parameters is not None else model.parameters


def memory_parameters(inp: EstimateInput) -> float:
    """Parameters one expert-parallel rank holds: the active ones (shared layers and the routed
    experts a token uses, counted replicated: an upper bound) plus the rest / expert_parallel."""
    model = inp.model
    active = active_parameters(model)
    return active + (model.parameters - active) / inp.hardware.expert_parallel


def _attention(model: ModelSpec, sequence_length: int) -> float:
    """Non-causal attention-score FLOPs of one token's forward and backward, 12 L h s (PaLM)."""
    if not (model.layers and model.hidden_size):
        return 0.0
    return 12.0 * model.layers * model.hidden_size * sequence_length


def dense_flops_per_token(model: ModelSpec, training: TrainingSpec) -> float:
    """Per-token FLOPs of the weights' matmuls: 6N full, 4N + 6T with a frozen base."""
    n = active_parameters(model)
    if training.method == "full":
        return 6.0 * n
    return 4.0 * n + 6.0 * trainable_parameters(model, training)


def model_flops_per_token_for(inp: EstimateInput, sequence_length: int) -> float:
    """Model FLOPs per trained token (MFU's numerator) at ``sequence_length``."""
    model, training = inp.model, inp.training
    attention = _attention(model, sequence_length)
    if training.method != "full":
        attention /= 2.0  # counted causal for adapters (see the module docstring)
    return dense_flops_per_token(model, training) + attention


def time_weight_per_token(inp: EstimateInput, sequence_length: int) -> float:
    """Per-token work weighted by how fast it runs: causal attention x2 (module docstring)."""
    return dense_flops_per_token(inp.model, inp.training) + _attention(inp.model, sequence_length)


def sequence_rescale(inp: EstimateInput) -> float:
    """Factor on a pilot's throughput measured at its own sequence length (1 when the same or
    when the architecture is unknown): per-token work at the pilot's over the training's."""
    pilot = inp.pilot
    if pilot is None or pilot.sequence_length is None:
        return 1.0
    target = inp.training.sequence_length
    if pilot.sequence_length == target or not (inp.model.layers and inp.model.hidden_size):
        return 1.0
    return time_weight_per_token(inp, pilot.sequence_length) / time_weight_per_token(inp, target)


def run_work(inp: EstimateInput) -> RunWork:
    """The FLOPs of the whole run (docs/domain.md §24)."""
    training = inp.training
    samples = samples_per_epoch(training) * training.epochs if _has_samples(training) else 0.0
    if training.flops_per_sample is not None:
        model_flops = 3.0 * training.flops_per_sample * samples
        executed = model_flops * (
            RECOMPUTE_FLOPS_FACTOR if training.activation_checkpointing else 1
        )
        tokens = tokens_per_epoch(training) * training.epochs
        return RunWork(model_flops, model_flops, executed, tokens, samples)
    tokens = tokens_per_epoch(training) * training.epochs
    per_token = model_flops_per_token_for(inp, training.sequence_length)
    model_flops = tokens * per_token
    headline = tokens * dense_flops_per_token(inp.model, training)
    if not training.activation_checkpointing:
        executed = model_flops
    elif training.method == "full":
        executed = model_flops * RECOMPUTE_FLOPS_FACTOR
    else:
        # One more forward pass: the base's 2N, the adapter's 2T and the attention's third.
        forward = 2.0 * active_parameters(inp.model) + 2.0 * trainable_parameters(
            inp.model, training
        )
        executed = model_flops + tokens * forward + (model_flops - headline) / 3.0
    return RunWork(headline, model_flops, executed, tokens, samples)


def _has_samples(training: TrainingSpec) -> bool:
    return training.samples is not None or training.tokens is not None
