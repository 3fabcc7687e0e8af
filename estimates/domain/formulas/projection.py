"""Another GPU from a pilot: the measured per-GPU speed-up between two cards where one is
published, else a roofline of both cards' compute and memory bandwidth.

Rules (docs/domain.md §24.11):

* A measured pair (same workload, same GPU count, same software on both cards) gives the
  ratio of per-GPU throughput; the inverse pair its inverse. Sources below. A100 to H100 is
  2.29x for MPT-7B where the peaks say 3.17x; MI300X to MI355X is 2.8x where they say 1.92x.
* Otherwise a roofline: each card delivers min(peak FLOP/s, intensity x memory bandwidth) for
  the job's arithmetic intensity (FLOPs per byte it moves through memory); the ratio of the two
  is the projection. Training large matmuls is compute-bound on every catalog card, so for it
  the roofline is the peaks' ratio; the answer says which basis it used.

Units: ratios (other / own throughput), FLOPs per byte.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Final

from catalog.domain.catalog import GpuModel
from estimates.domain.formulas.memory import MemoryBreakdown
from estimates.domain.formulas.specs import EstimateInput

_FOUNDRY = (
    "MosaicML llm-foundry, scripts/train/benchmarking/README.md: MPT-7B, 2,048 tokens, 8 "
    "GPUs, micro-batch 6, FSDP: A100-80GB 4,641 and H100 10,643 tokens/s per GPU"
)
_LAMBDA = (
    "lambdal/deeplearning-benchmark, pytorch/pytorch-train-throughput-fp16.csv: BERT-large "
    "SQuAD training, 1 GPU, fp16: RTX 4090 93, H100 80GB SXM5 301 sequences/s"
)
_LAMBDA_V2 = (
    "lambdal/deeplearning-benchmark, pytorch/pytorch-train-throughput-v2-fp16.csv: BERT-large "
    "SQuAD training, 1 GPU: H100 80GB SXM5 311, H200 350, B200 523 sequences/s"
)
_AMD = (
    "AMD, 'Accelerating AI Training ... MLPerf Training v5.1' (amd.com/en/blogs/2025/"
    "accelerating-ai-training.html): Llama 2 70B LoRA (FP8) on 8 GPUs, up to 2.8x faster "
    "time-to-train on MI355X (10.18 min) than on MI300X"
)
# (own, other) -> (other's per-GPU throughput / own's, source). docs/domain.md §24.11.
MEASURED_RATIOS: Final[Mapping[tuple[str, str], tuple[float, str]]] = MappingProxyType(
    {
        ("A100-80GB", "H100-SXM"): (10643 / 4641, _FOUNDRY),
        ("RTX-4090", "H100-SXM"): (301 / 93, _LAMBDA),
        ("H100-SXM", "H200"): (350 / 311, _LAMBDA_V2),
        ("H100-SXM", "B200"): (523 / 311, _LAMBDA_V2),
        ("MI300X", "MI355X"): (2.8, _AMD),
    }
)


@dataclass(frozen=True)
class Speedup:
    """How much faster ``other`` runs the job than ``own`` (per GPU), and on what basis."""

    ratio: float
    basis: str  # "same", "measured" or "roofline"
    source: str


def _direct(own: str, other: str) -> tuple[float, str] | None:
    if (own, other) in MEASURED_RATIOS:
        return MEASURED_RATIOS[(own, other)]
    if (other, own) in MEASURED_RATIOS:
        ratio, source = MEASURED_RATIOS[(other, own)]
        return 1.0 / ratio, f"the inverse of: {source}"
    return None


@functools.lru_cache(maxsize=1024)
def measured_ratio(own: str, other: str) -> tuple[float, str] | None:
    """A published pair, its inverse, or two pairs through one card both were measured
    against (4090 to H200 through the H100: 3.24 x 1.13)."""
    direct = _direct(own, other)
    if direct is not None:
        return direct
    cards = {card for pair in MEASURED_RATIOS for card in pair} - {own, other}
    for middle in sorted(cards):
        first, second = _direct(own, middle), _direct(middle, other)
        if first is not None and second is not None:
            return first[0] * second[0], f"through the {middle}: {first[1]}; then {second[1]}"
    return None


def delivered_flops(gpu: GpuModel, precision: str, intensity: float | None) -> float:
    """What the roofline lets ``gpu`` deliver: min(peak, intensity x memory bandwidth)."""
    peak = gpu.peak_flops[precision]
    bandwidth = gpu.memory_bandwidth_bytes_per_second
    if intensity is None or bandwidth is None:
        return peak
    return min(peak, intensity * bandwidth)


@functools.lru_cache(maxsize=4096)
def speedup(
    own: GpuModel, other: GpuModel, precision: str, intensity: float | None = None
) -> Speedup:
    """The per-GPU speed-up from ``own`` to ``other`` at ``precision``: measured, else the
    roofline at ``intensity`` FLOPs per byte (None: compute-bound, the peaks' ratio)."""
    if own.name == other.name:
        return Speedup(1.0, "same", "")
    measured = measured_ratio(own.name, other.name)
    if measured is not None:
        return Speedup(measured[0], "measured", measured[1])
    theirs = delivered_flops(other, precision, intensity)
    ours = delivered_flops(own, precision, intensity)
    bound = "compute-bound" if intensity is None else f"{intensity:,.0f} FLOPs per byte"
    return Speedup(
        theirs / ours,
        "roofline",
        f"roofline ({bound}): {other.name} {theirs / 1e12:,.0f} vs {own.name} "
        f"{ours / 1e12:,.0f} TFLOP/s delivered at this precision; no measured pair published",
    )


def training_intensity(
    inp: EstimateInput, memory: MemoryBreakdown, flops_per_token: float
) -> float | None:
    """FLOPs per byte of one micro-batch on one GPU: its share of the FLOPs over the weights
    read three times (forward, both backward products), the activations written and read back,
    and the gradients and optimizer states read and written once per optimizer step."""
    training, hardware = inp.training, inp.hardware
    tokens = training.micro_batch_size * training.sequence_length / hardware.context_parallel
    flops = flops_per_token * tokens / (hardware.tensor_parallel * hardware.pipeline_parallel)
    states = (memory.gradients + memory.optimizer) / training.gradient_accumulation_steps
    moved = 3.0 * memory.weights + 2.0 * memory.activations + 2.0 * states
    return flops / moved if moved > 0 and flops > 0 else None
