"""Lower precision by shape: how much faster FP8 or FP4 runs a job, from the share of its time
the matmuls take.

Rule (docs/domain.md §24.7): FP8 and FP4 speed the dense matmuls up by a measured factor g;
attention (FlashAttention in 16 bits) and the rest stay as they are. With a the attention's
share of a token's time (PaLM's 12 L w s against the dense 6 N, as §24.4 weighs them), the run
goes 1 / ((1 - a) / g + a) times faster, never more than the peaks' ratio. g is read from one
published end-to-end figure at a known shape: FP8 from torchao's 1.25x for Llama 3 8B at 8,192
tokens (a = 0.21: g = 1.34), FP4 from NVIDIA's NVFP4 1.59x for the same model and length
(g = 1.89). Checked held out: MosaicML's FP8 and BF16 rows on H100 (MPT-1B and 3B at 512,
8,192 and 32,768 tokens: 1.35x falling to 1.00x) within 10%.

Units: ratios; shares of a token's time.
"""

from __future__ import annotations

from typing import Final

from catalog.domain.catalog import GpuModel
from estimates.domain.formulas.shape import attention_width, stack_layers
from estimates.domain.formulas.specs import EstimateInput
from estimates.domain.formulas.work import dense_flops_per_token

# Llama 3 8B at 8,192 tokens: 12 x 32 x 4,096 x 8,192 over 6 x 8.03e9 plus that.
ANCHOR_ATTENTION_SHARE: Final = 12 * 32 * 4096 * 8192 / (6 * 8.03e9 + 12 * 32 * 4096 * 8192)
FP8_END_TO_END: Final = 1.25
FP4_END_TO_END: Final = 1850.0 / 1165.0


def matmul_speedup(end_to_end: float, attention_share: float = ANCHOR_ATTENTION_SHARE) -> float:
    """g such that 1 / ((1 - a) / g + a) is the measured end-to-end figure."""
    return (1.0 - attention_share) / (1.0 / end_to_end - attention_share)


FP8_MATMUL_SPEEDUP: Final = matmul_speedup(FP8_END_TO_END)
FP4_MATMUL_SPEEDUP: Final = matmul_speedup(FP4_END_TO_END)
FP8_SOURCE: Final = (
    "torchao.float8 README: up to 1.25x end to end for Llama 3 8B on 8 H100 (torchtitan, 8,192 "
    "tokens), its matmuls x1.34 and attention unchanged at this length"
)
FP4_SOURCE: Final = (
    "NVIDIA's NVFP4 pretraining of Llama 3 8B on GB200 NVL72 (NeMo Megatron-Bridge), 1,850 vs "
    "1,165 model TFLOP/s per GPU in bf16 (1.59x), its matmuls x1.89 and attention unchanged"
)
_MATMUL: Final = {"fp8": (FP8_MATMUL_SPEEDUP, FP8_SOURCE), "fp4": (FP4_MATMUL_SPEEDUP, FP4_SOURCE)}


def attention_time_share(inp: EstimateInput | None) -> float:
    """Attention's share of a token's time (the anchor's when the shape is unknown)."""
    if inp is None:
        return ANCHOR_ATTENTION_SHARE
    model = inp.model
    if not (model.layers and model.hidden_size):
        return ANCHOR_ATTENTION_SHARE
    attention = 12.0 * stack_layers(model) * attention_width(model) * inp.training.sequence_length
    return attention / (attention + dense_flops_per_token(model, inp.training))


def shaped_speedup(lower: str, attention_share: float) -> float | None:
    """The end-to-end speed-up of ``lower`` at this attention share; None without a figure."""
    if lower not in _MATMUL:
        return None
    g = _MATMUL[lower][0]
    return 1.0 / ((1.0 - attention_share) / g + attention_share)


def precision_speedup(
    gpu: GpuModel, precision: str, lower: str, inp: EstimateInput | None = None
) -> tuple[float, str]:
    """How much faster ``lower`` runs than ``precision`` on ``gpu``, and on what basis: by the
    job's shape for FP8 and FP4 (never more than the peaks' ratio), else the peaks' ratio."""
    peak_ratio = gpu.peak_flops[lower] / gpu.peak_flops[precision]
    share = attention_time_share(inp)
    shaped = shaped_speedup(lower, share)
    if shaped is None:
        return peak_ratio, "assuming throughput follows peak FLOP/s"
    source = _MATMUL[lower][1]
    return min(shaped, peak_ratio), f"{source}; attention {100 * share:.0f}% of this job's time"
