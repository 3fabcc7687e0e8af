"""Interconnect: the bytes a training step moves between GPUs, how long that takes, and what
it leaves of linear scaling.

Rules (docs/domain.md §24.6):

* A ring all-reduce of S bytes over n GPUs moves 2 (n - 1) / n x S bytes through each GPU's
  link; nccl-tests call S / t the algorithm bandwidth and S / t x 2 (n - 1) / n the bus
  bandwidth, the figure comparable with the link's speed. So t = S x 2 (n - 1) / n / B with B
  the link's (bus) bandwidth. A reduce-scatter or all-gather moves half of that.
* Data parallelism all-reduces the trainable parameters' gradients once per optimizer step
  (ZeRO 1-2: a reduce-scatter plus an all-gather, the same bytes); ZeRO-3 also all-gathers the
  16-bit weights for the forward and again for the backward (Rajbhandari et al. 2020: 1.5x the
  all-reduce volume). One optimizer step is the global batch: micro_batch x
  gradient_accumulation_steps x data-parallel replicas sequences (docs/domain.md §24.10).
* Gradient accumulation: plain data parallelism (ZeRO 0-1) all-reduces once per optimizer
  step, during the last micro-batch's backward (DDP's no_sync before it), so only that
  backward can hide it; ZeRO 2-3 keep only their gradient shard and reduce-scatter after every
  micro-batch, each behind its own backward. ZeRO-3's gathers, the expert all-to-alls and the
  context ring run every micro-batch.
* Expert parallelism moves each token's hidden state to its experts and back, forward and
  backward: 4 all-to-alls of micro_batch x sequence x hidden x 2 bytes, (n - 1) / n of it off
  the GPU. Context parallelism passes the key/value blocks around the ring: 2 x (cp - 1) / cp
  x micro_batch x sequence x kv size x 2 bytes per layer, forward, twice that backward.
* Within a node the card-to-card bandwidth applies, beyond it the node-to-node bandwidth per
  GPU (the slower link bounds a ring through both).
* Overlap: the gradient all-reduce overlaps the backward pass (2/3 of a step's compute); what
  exceeds it is exposed. Scaling efficiency = compute / (compute + exposed).

Units: bytes per step, seconds per step, bandwidth in bytes per second (unidirectional).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from catalog.domain.catalog import GpuModel
from estimates.domain.formulas.adapters import trainable_parameters
from estimates.domain.formulas.checks import positive, positive_int
from estimates.domain.formulas.specs import EstimateInput, samples_per_epoch, tokens_per_epoch
from estimates.domain.formulas.work import memory_parameters

# The share of a step's compute the gradient all-reduce can hide behind (the backward pass).
BACKWARD_SHARE: Final = 2.0 / 3.0
DEFAULT_GPUS_PER_NODE: Final = 8


@dataclass(frozen=True)
class Communication:
    """One training step's traffic and time on the given GPUs."""

    bytes_per_step: float
    seconds_per_step: float
    exposed_seconds_per_step: float
    compute_seconds_per_step: float
    steps: float
    bandwidth_bytes_per_second: float | None
    scaling_efficiency: float
    link: str
    # Samples (sequences) per optimizer step: micro-batch x accumulation x data-parallel.
    global_batch_size: float = 0.0


def all_reduce_seconds(size_bytes: float, gpus: int, bus_bandwidth: float) -> float:
    """Ring all-reduce time t = S x 2 (n - 1) / n / B (nccl-tests' bus bandwidth definition)."""
    n = positive_int(gpus, "gpus")
    return (
        positive(size_bytes, "size_bytes")
        * 2.0
        * (n - 1)
        / n
        / positive(bus_bandwidth, "bus_bandwidth")
    )


def bus_bandwidth(algorithm_bandwidth: float, gpus: int) -> float:
    """nccl-tests' all-reduce bus bandwidth: algbw x 2 (n - 1) / n."""
    n = positive_int(gpus, "gpus")
    return positive(algorithm_bandwidth, "algorithm_bandwidth") * 2.0 * (n - 1) / n


def link_bandwidth(gpu: GpuModel, gpus: int, gpus_per_node: int | None) -> tuple[float | None, str]:
    """The slowest link a ring over ``gpus`` crosses, and its name."""
    per_node = gpus_per_node or DEFAULT_GPUS_PER_NODE
    if gpus <= per_node:
        return gpu.card_to_card_bytes_per_second, "card-to-card"
    inter = gpu.node_to_node_bytes_per_second
    intra = gpu.card_to_card_bytes_per_second
    if inter is None or intra is None:
        return None, "node-to-node"
    return min(inter, intra), "node-to-node"


@dataclass(frozen=True)
class StepTraffic:
    """Bytes one GPU sends per step, by cause; ``ring`` counts the data-parallel ones."""

    gradients: float
    gathers: float
    experts: float
    context: float

    @property
    def total(self) -> float:
        return self.gradients + self.gathers + self.experts + self.context


def step_traffic(
    *,
    trainable_bytes: float,
    weight_bytes: float,
    data_parallel: int,
    zero_stage: int,
    token_bytes: float,
    expert_parallel: int,
    context_parallel: int,
    kv_bytes_per_layer: float,
    accumulation: int = 1,
) -> StepTraffic:
    """Per-GPU bytes of one optimizer step of ``accumulation`` micro-batches (docs/domain.md
    §24.6, §24.10); ``token_bytes`` = b s h x 2 of one micro-batch."""
    dp = data_parallel
    ring = 2.0 * (dp - 1) / dp if dp > 1 else 0.0
    reductions = accumulation if zero_stage >= 2 else 1
    gradients = trainable_bytes * ring * reductions
    gathers = 2.0 * weight_bytes * (dp - 1) / dp if zero_stage >= 3 and dp > 1 else 0.0
    ep = expert_parallel
    experts = 4.0 * token_bytes * (ep - 1) / ep if ep > 1 else 0.0
    cp = context_parallel
    context = 3.0 * 2.0 * kv_bytes_per_layer * (cp - 1) / cp if cp > 1 else 0.0
    return StepTraffic(
        gradients, gathers * accumulation, experts * accumulation, context * accumulation
    )


def communication(
    traffic: StepTraffic,
    bandwidth: float | None,
    link: str,
    compute_seconds_per_step: float,
    steps: float,
    overlap_share: float = BACKWARD_SHARE,
    global_batch_size: float = 0.0,
) -> Communication:
    """Seconds per step at ``bandwidth``, what the backward pass cannot hide, the efficiency;
    ``overlap_share`` is the part of the step's compute the gradient traffic can hide behind."""
    if bandwidth is None or traffic.total <= 0:
        return Communication(
            traffic.total,
            0.0,
            0.0,
            compute_seconds_per_step,
            steps,
            bandwidth,
            1.0,
            link,
            global_batch_size,
        )
    seconds = traffic.total / bandwidth
    # The gradient all-reduce hides behind the backward pass; expert and context traffic sit
    # on the critical path between layers, counted exposed (an upper bound).
    hidden = min(traffic.gradients / bandwidth, overlap_share * compute_seconds_per_step)
    exposed = seconds - hidden
    total = compute_seconds_per_step + exposed
    efficiency = compute_seconds_per_step / total if total > 0 else 1.0
    return Communication(
        traffic.total,
        seconds,
        exposed,
        compute_seconds_per_step,
        steps,
        bandwidth,
        efficiency,
        link,
        global_batch_size,
    )


def job_communication(
    inp: EstimateInput, gpu: GpuModel, gpus: int, compute_seconds: float
) -> Communication:
    """The run's per-step traffic on ``gpus`` GPUs and what it adds to ``compute_seconds``."""
    model, training, hardware = inp.model, inp.training, inp.hardware
    tp, pp, cp = hardware.tensor_parallel, hardware.pipeline_parallel, hardware.context_parallel
    model_parallel = tp * pp
    replicas = max(1, gpus // (model_parallel * cp))
    grad_bytes = 4.0 if training.precision in ("fp32", "tf32") else 2.0
    trainable = trainable_parameters(model, training)
    on_device = memory_parameters(inp) / model_parallel
    layers = model.layers or 0
    hidden = model.hidden_size or 0
    local_tokens = training.micro_batch_size * training.sequence_length / cp
    accumulation = training.gradient_accumulation_steps
    heads = model.attention_heads or 1
    kv_width = (model.key_value_heads or heads) * hidden / heads
    traffic = step_traffic(
        trainable_bytes=trainable / model_parallel * grad_bytes,
        weight_bytes=on_device * 2.0,
        data_parallel=max(1, gpus // model_parallel),
        zero_stage=hardware.zero_stage,
        token_bytes=local_tokens * hidden * 2.0 * layers if model.experts else 0.0,
        expert_parallel=hardware.expert_parallel,
        context_parallel=cp,
        kv_bytes_per_layer=local_tokens * 2.0 * kv_width * 2.0 * layers,
        accumulation=accumulation,
    )
    global_batch = training.micro_batch_size * accumulation * replicas
    steps = _optimizer_steps(inp, global_batch)
    bandwidth, link = link_bandwidth(gpu, gpus, hardware.gpus_per_node)
    if gpus <= 1:
        bandwidth = None
    # ZeRO 0-1 reduce once, behind the last micro-batch's backward only (module docstring).
    overlap = BACKWARD_SHARE / (accumulation if hardware.zero_stage < 2 else 1)
    return communication(
        traffic, bandwidth, link, compute_seconds / steps, steps, overlap, float(global_batch)
    )


def _optimizer_steps(inp: EstimateInput, global_batch: int) -> float:
    """Optimizer steps of the run: samples over the global batch (tokens over its tokens)."""
    training = inp.training
    tokens = tokens_per_epoch(training) * training.epochs
    if tokens > 0:
        return max(1.0, tokens / (global_batch * training.sequence_length))
    samples = samples_per_epoch(training) * training.epochs
    return max(1.0, samples / global_batch) if samples > 0 else 1.0
