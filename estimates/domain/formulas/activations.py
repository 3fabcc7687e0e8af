"""Activation and logits memory of a training step on the busiest device.

Rules (docs/domain.md §10.4, §24.2, §24.4):

* GPT-style layers (no ``intermediate_size``): Korthikanti et al. (2022), s b h (34 + 5 a s / h)
  bytes per layer with 2-byte values, dropout masks included.
* Llama-style layers (a gated MLP of width f, grouped-query attention, no dropout): each layer
  keeps, per token, both norms' inputs and outputs (4h), q and the attention output (2w, w the
  attention width), k and v (2 kv), and the MLP's gate, up, activation and product (4f), in
  16-bit: v (4h + 2w + 2kv + 4f); without FlashAttention the a s x s scores add as
  Korthikanti's do. An encoder-decoder's decoder layers add the cross-attention block (2h + 2w
  + 2kv). GPT's block counted this way is Korthikanti's 32 + 2 of dropout masks.
* Full recomputation keeps each layer's input (v h per token) and, while a layer is
  recomputed, that one layer's whole activations.
* Logits, b s V / t, by the loss (``training.loss``): ``standard`` (Hugging Face's eager loss)
  peaks at 16 bytes a logit: the 16-bit logits (2), their fp32 copy (4), the log-softmax
  saved for backward (4), its gradient (4) and the logits' gradient (2); ``chunked``
  (torchtune's CEWithChunkedOutputLoss, 8 chunks) keeps the fp32 log-softmax of every chunk (4)
  and one chunk's copy and gradients at a time (10/8): 5.25; ``fused`` (Liger's fused linear
  cross-entropy, Cut Cross-Entropy) never materializes them: 0 (CCE measures 1 MB for Gemma 2's
  2.1e9 logits).

Units: bytes per device (int, rounded up).
"""

from __future__ import annotations

import math
from typing import Final

from estimates.domain.formulas.checks import check_choice, positive_int
from estimates.domain.formulas.shape import (
    attention_width,
    is_encoder_decoder,
    is_gated,
    kv_width,
    mlp_width,
    stack_layers,
)
from estimates.domain.formulas.specs import MIXED_PRECISIONS, PRECISIONS, EstimateInput

# Bytes a logit takes at the loss's peak, by implementation (module docstring).
LOSS_BYTES_PER_LOGIT: Final = {"standard": 16.0, "chunked": 4.0 + 10.0 / 8, "fused": 0.0}


def activation_bytes(
    sequence_length: int,
    micro_batch_size: int,
    hidden_size: int,
    attention_heads: int,
    layers: int,
    *,
    precision: str = "bf16",
    recompute: bool = False,
    flash_attention: bool = False,
    tensor_parallel: int = 1,
    sequence_parallel: bool = True,
    pipeline_parallel: int = 1,
    in_flight_microbatches: int | None = None,
) -> int:
    """Activation bytes on the busiest device (transformer layers only).

    Source: Korthikanti et al. (2022), "Reducing Activation Recomputation in Large Transformer
    Models", sections 4.1-4.2. Per layer, with 2-byte activations and 1-byte dropout masks:
    s b h (34 + 5 a s / h) bytes. Split by what is stored, that is s b h (16 v + 2) +
    a s^2 b (2 v + 1) with v bytes per value; fp32/tf32 use v = 4 (66 and 9), fp8 keeps v = 2
    (only GEMM inputs are cast).

    * Tensor parallel t with sequence parallelism (eq. 4, the default here): everything / t.
      Without it (eq. 2): s b h (10 + 24/t + 5 a s / (h t)) for v = 2.
    * ``flash_attention``: the s x s scores are not stored (Dao et al. 2022 recompute them);
      memory equals Korthikanti's selective recomputation, s b h 34 / t.
    * Full recomputation: only each layer's input is kept, 2 s b h (v s b h) per layer (/ t
      with sequence parallelism).
    * Pipeline parallel p: a stage holds ceil(L / p) layers, and under the 1F1B schedule the
      first stage keeps ``in_flight_microbatches`` = p micro-batches alive (section 4.2.3), so
      the busiest stage holds about L layers' worth. Embedding and logit activations are not
      counted (they add ~4 s b V / t bytes on the last stage).
    """
    s = positive_int(sequence_length, "sequence_length")
    b = positive_int(micro_batch_size, "micro_batch_size")
    h = positive_int(hidden_size, "hidden_size")
    a = positive_int(attention_heads, "attention_heads")
    n_layers = positive_int(layers, "layers")
    t = positive_int(tensor_parallel, "tensor_parallel")
    p = positive_int(pipeline_parallel, "pipeline_parallel")
    in_flight = p if in_flight_microbatches is None else in_flight_microbatches
    positive_int(in_flight, "in_flight_microbatches")
    check_choice(precision, PRECISIONS, "precision")
    v = 2 if precision in MIXED_PRECISIONS else 4
    sbh = s * b * h
    if recompute:
        per_layer = v * sbh / (t if sequence_parallel else 1)
    else:
        scores = 0.0 if flash_attention else a * s * s * b * (2 * v + 1) / t
        if sequence_parallel or t == 1:
            linear = sbh * (16 * v + 2) / t
        else:
            # Layer norms, dropout masks and the QKV / MLP inputs stay replicated (eq. 2).
            linear = sbh * (4 * v + 2) + sbh * 12 * v / t
        per_layer = linear + scores
    layers_per_stage = -(-n_layers // p)
    return math.ceil(per_layer * layers_per_stage * in_flight)


def loss_kind(inp: EstimateInput) -> str:
    """``training.loss``, else ``chunked_loss`` (true: chunked), else standard."""
    training = inp.training
    if training.loss is not None:
        return training.loss
    return "chunked" if training.chunked_loss else "standard"


def logits_bytes(inp: EstimateInput, micro_batch: int) -> int:
    """The output layer's logits at the loss's peak, b s V / t x its bytes a logit."""
    model, training, hardware = inp.model, inp.training, inp.hardware
    if not model.vocab_size or training.flops_per_sample is not None:
        return 0
    local = -(-training.sequence_length // hardware.context_parallel)
    per_logit = LOSS_BYTES_PER_LOGIT[loss_kind(inp)]
    return math.ceil(micro_batch * local * model.vocab_size / hardware.tensor_parallel * per_logit)


def _values_per_token(inp: EstimateInput) -> tuple[float, float]:
    """Values a Llama-style layer keeps per token: (per self-attention layer, per decoder
    cross-attention block)."""
    model = inp.model
    h, w, kv, f = model.hidden_size or 0, attention_width(model), kv_width(model), mlp_width(model)
    return 4 * h + 2 * w + 2 * kv + 4 * f, 2 * h + 2 * w + 2 * kv


def layer_activation_bytes(
    inp: EstimateInput, sequence: int, micro_batch: int, *, recompute: bool, flash: bool
) -> int:
    """Activations of a Llama-style (gated) model on the busiest device (module docstring)."""
    model, hardware = inp.model, inp.hardware
    v = 2 if inp.training.precision in MIXED_PRECISIONS else 4
    t, p = hardware.tensor_parallel, hardware.pipeline_parallel
    tokens = sequence * micro_batch
    self_block, cross = _values_per_token(inp)
    scores = 0.0 if flash else (model.attention_heads or 1) * sequence * (2 * v + 1) / v
    per_layer = v * tokens * (self_block + scores) / t
    cross_layers = model.layers or 0 if is_encoder_decoder(model) else 0
    layers = stack_layers(model)
    per_stage = -(-layers // p)
    if recompute:
        inputs = v * tokens * (model.hidden_size or 0) / t * per_stage * p
        return math.ceil(inputs + per_layer)
    cross_bytes = v * tokens * cross / t * -(-cross_layers // p)
    return math.ceil((per_layer * per_stage + cross_bytes) * p)


def is_llama_style(inp: EstimateInput) -> bool:
    return is_gated(inp.model) or inp.model.attention_width is not None
