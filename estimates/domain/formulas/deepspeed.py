"""DeepSpeed's own ZeRO model-state estimators, reproduced (a practical upper figure).

Rule: DeepSpeed's ``estimate_zero2_model_states_mem_needs`` and
``estimate_zero3_model_states_mem_needs`` with their 1.5 buffer factor.
Units: bytes per GPU and per CPU node (int).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Final

from estimates.domain.formulas.checks import (
    EstimateInputError,
    check_choice,
    non_negative,
    positive,
    positive_int,
)
from estimates.domain.formulas.specs import OFFLOADS

# DeepSpeed's estimators multiply CPU memory by this "additional_buffer_factor" (their default).
DEEPSPEED_BUFFER_FACTOR: Final = 1.5
DEEPSPEED_VERSION: Final = (
    "DeepSpeed master: stage_1_and_2.estimate_zero2_model_states_mem_needs (2 + 18/N bytes per "
    "parameter on GPU) and stage3.estimate_zero3_model_states_mem_needs (zero_init=True), "
    "additional_buffer_factor=1.5"
)


@dataclass(frozen=True)
class DeepSpeedMemory:
    """What DeepSpeed's own estimator prints: bytes per GPU and per CPU (node) for model states."""

    per_gpu_bytes: int
    cpu_bytes: int
    version: str = DEEPSPEED_VERSION


def deepspeed_zero_memory(
    parameters: float,
    gpus: int,
    zero_stage: int,
    *,
    offload: str = "none",
    largest_layer_parameters: float = 0.0,
    gpus_per_node: int | None = None,
    buffer_factor: float = DEEPSPEED_BUFFER_FACTOR,
) -> DeepSpeedMemory:
    """DeepSpeed's per-GPU and per-CPU (node) model-state estimate for ZeRO stages 2 and 3.

    Source: DeepSpeed's current code, deepspeed/runtime/zero/stage_1_and_2.py
    ``estimate_zero2_model_states_mem_needs`` and stage3.py
    ``estimate_zero3_model_states_mem_needs``
    (docs/code-docs/source/memory.rst shows their output), with P parameters, N GPUs in all,
    G GPUs per node, L the largest layer's parameters and f the buffer factor (1.5):

    * ZeRO-2, no offload: GPU 2P + 18P/N (16-bit weights; 16-bit and fp32 gradients, fp32
      master and Adam states partitioned), CPU 4PGf. Optimizer offload: GPU 2P, CPU P max(4N, 16) f.
    * ZeRO-3 (zero_init): no offload GPU 4L + 18P/N, CPU 4LGf; optimizer offload GPU
      4L + 2P/N, CPU 16Pf/nodes; optimizer and parameter offload GPU 4L, CPU 18Pf/nodes.

    DeepSpeed offloads parameters only at stage 3.
    """
    p = positive(parameters, "parameters")
    n = positive_int(gpus, "gpus")
    per_node = min(n, 8) if gpus_per_node is None else positive_int(gpus_per_node, "gpus_per_node")
    per_node = min(per_node, n)
    nodes = math.ceil(n / per_node)
    largest = non_negative(largest_layer_parameters, "largest_layer_parameters")
    f = positive(buffer_factor, "buffer_factor")
    check_choice(offload, OFFLOADS, "offload")
    if zero_stage not in (2, 3):
        raise EstimateInputError("zero_stage", "DeepSpeed publishes estimators for stages 2 and 3")
    if offload != "none":
        weights, gradients = offloaded_placement(p, n, zero_stage, offload, largest)
        if zero_stage == 2:
            cpu = p * max(4 * n, 16) * f
        else:
            cpu = p * (18 if offload == "optimizer_and_parameters" else 16) / nodes * f
        return DeepSpeedMemory(weights + gradients, int(cpu))
    if zero_stage == 2:
        return DeepSpeedMemory(int(2 * p + int(18 * p / n)), int(p * 4 * per_node * f))
    layer = 4 * largest
    return DeepSpeedMemory(int(layer + int(18 * p / n)), int(largest * 4 * per_node * f))


def offloaded_placement(
    parameters: float, gpus: int, zero_stage: int, offload: str, largest_layer_parameters: float
) -> tuple[int, int]:
    """(weights, gradients) bytes DeepSpeed keeps on each GPU under offload, as its estimators
    count them (docs/domain.md §24.2): ZeRO-Offload (stage 1 or 2) keeps the 16-bit weights
    (2P) and streams each gradient partition to the CPU as it is reduced; stage 3 keeps its
    16-bit shard (2P/N) and the gathered largest layer's weights and gradients (2L + 2L), or only
    the layer (4L) when the parameters are offloaded too."""
    if offload == "optimizer_and_parameters" and zero_stage != 3:
        raise EstimateInputError("offload", "DeepSpeed offloads parameters at ZeRO stage 3 only")
    layer = int(2 * largest_layer_parameters)
    if zero_stage <= 2:
        return int(2 * parameters), 0
    if offload == "optimizer_and_parameters":
        return layer, layer
    return layer + int(2 * parameters / gpus), layer


def deepspeed_model_states_bytes(
    parameters: float, gpus: int, zero_stage: int, largest_layer_parameters: float = 0.0
) -> int:
    """DeepSpeed's own per-GPU model-state estimate without offload, a practical upper figure.

    Source: ``deepspeed_zero_memory`` (DeepSpeed's current estimators): ZeRO-2 = 2P + 18P/N,
    ZeRO-3 = 4 x largest layer + 18P/N. Higher than the ZeRO paper's accounting because it
    counts the fp32 gradient copy and working buffers.
    """
    return deepspeed_zero_memory(
        parameters, gpus, zero_stage, largest_layer_parameters=largest_layer_parameters
    ).per_gpu_bytes
