"""Training and inference FLOPs of a transformer.

Rule: training ~= 6 x parameters x tokens (Kaplan et al. 2020), inference 2 x parameters per
token; Narayanan et al. (2021) and PaLM (Chowdhery et al. 2022) add the attention and logit
terms when the architecture is known (docs/domain.md §10).
Units: FLOPs (float), parameters and tokens as counts.
"""

from __future__ import annotations

from typing import Final

from estimates.domain.formulas.checks import positive, positive_int

# Narayanan et al. (2021): 96 / 72, i.e. full recomputation adds one forward pass to 3.
RECOMPUTE_FLOPS_FACTOR: Final = 4.0 / 3.0


# --------------------------------------------------------------------------------------- FLOPs


def training_flops(parameters: float, tokens: float) -> float:
    """Training FLOPs ~= 6 * P * T: forward (2PT) plus backward (4PT).

    Source: Kaplan et al. (2020), "Scaling Laws for Neural Language Models", section 2.1,
    C ~= 6NBS. Ignores the attention-score term (small when d_model >> n_ctx / 12).
    """
    return 6.0 * positive(parameters, "parameters") * positive(tokens, "tokens")


def inference_flops(parameters: float, tokens: float = 1.0) -> float:
    """Inference (forward only) FLOPs ~= 2 * P per token.

    Source: Kaplan et al. (2020), section 2.1 (C_forward ~= 2N per token).
    """
    return 2.0 * positive(parameters, "parameters") * positive(tokens, "tokens")


def narayanan_flops_per_iteration(
    batch_size: int,
    sequence_length: int,
    layers: int,
    hidden_size: int,
    vocab_size: int,
    *,
    recompute: bool,
) -> float:
    """FLOPs of one training iteration of a GPT-style transformer (batch of B sequences).

    Source: Narayanan et al. (2021), "Efficient Large-Scale Language Model Training on GPU
    Clusters Using Megatron-LM", section 5.1, eq. (3): with full activation recomputation
    F = 96 B s l h^2 (1 + s/(6h) + V/(16 l h)). Without recomputation the backward-to-forward
    ratio is 2 instead of 3 for the transformer layers (the logit layer is never recomputed),
    which gives F = 72 B s l h^2 (1 + s/(6h) + V/(12 l h)).
    """
    b = float(positive_int(batch_size, "batch_size"))
    s = float(positive_int(sequence_length, "sequence_length"))
    n_layers = float(positive_int(layers, "layers"))
    h = float(positive_int(hidden_size, "hidden_size"))
    v = float(positive_int(vocab_size, "vocab_size"))
    if recompute:
        return 96.0 * b * s * n_layers * h * h * (1.0 + s / (6.0 * h) + v / (16.0 * n_layers * h))
    return 72.0 * b * s * n_layers * h * h * (1.0 + s / (6.0 * h) + v / (12.0 * n_layers * h))


def narayanan_training_flops(
    tokens: float,
    sequence_length: int,
    layers: int,
    hidden_size: int,
    vocab_size: int,
    *,
    recompute: bool,
) -> float:
    """Whole-run FLOPs: Narayanan's per-iteration formula times tokens / (B * s) iterations.

    Source: Narayanan et al. (2021), eq. (3) and section 5.1 (end-to-end time ~= 8TP/(nX)
    with recomputation); the batch size B cancels out.
    """
    per_sequence = narayanan_flops_per_iteration(
        1, sequence_length, layers, hidden_size, vocab_size, recompute=recompute
    )
    return per_sequence * positive(tokens, "tokens") / sequence_length


def model_flops_per_token(
    parameters: float,
    layers: int | None = None,
    hidden_size: int | None = None,
    sequence_length: int | None = None,
) -> float:
    """Model FLOPs per trained token: 6N, plus PaLM's attention term 12 L H Q T when known.

    Source: Chowdhery et al. (2022), "PaLM", appendix B: model FLOPs per token = 6N + 12LHQT
    (L layers, H heads x Q head size = the hidden size, T sequence length). MFU is
    throughput x this / peak FLOP/s; it excludes recomputation (that is HFU).
    """
    flops = 6.0 * positive(parameters, "parameters")
    if layers and hidden_size and sequence_length:
        flops += 12.0 * layers * hidden_size * sequence_length
    return flops
