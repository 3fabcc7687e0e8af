"""Interconnect: each collective a training step runs, its bytes, its time on the link it
crosses, what hides it, and what it leaves of linear scaling.

Rules (docs/domain.md §24.6, §24.10), per optimizer step of ``accumulation`` micro-batches
(compute c each: forward c/3, backward 2c/3):

* Data parallelism (ZeRO 0, DDP): one all-reduce of the trainable gradients, in 25 MiB buckets
  behind the last micro-batch's backward; the last bucket is always exposed. ZeRO-1: the same
  reduction, then the updated 16-bit weights all-gathered behind the next forward (Megatron's
  overlapped distributed optimizer). ZeRO-2: a reduce-scatter behind every micro-batch's
  backward, the same gather. ZeRO-3 / FSDP: every micro-batch all-gathers the weights for the
  forward (prefetched: hidden by the forward but for the first layer's) and again for the
  backward, with a reduce-scatter of the gradients, both behind the backward.
* Mixture-of-experts: the experts' gradients reduce over the ranks holding the same experts;
  4 all-to-alls per layer and micro-batch move the routed tokens (tokens x experts_per_token x
  hidden x 2 bytes) inside the expert group, on the critical path (exposed).
* Tensor parallelism: 4 all-reduces per layer and micro-batch (6 with recomputation) of the
  micro-batch's activations; inside a node they sit between the layer's matmuls and every
  published or measured utilization already contains them (listed, not added); a tensor
  group that spans nodes is charged in full.
* Pipeline parallelism: activations sent forward and gradients back per micro-batch, hidden by
  1F1B; the bubble (p - 1) / (m + p - 1) is stated and, like tensor parallelism's traffic, is
  part of any utilization measured at that shape.
* Context parallelism: the key/value blocks go round the ring (cp - 1) times forward and twice
  that backward, hidden behind the attention they feed.
* Scaling efficiency = compute / (compute + exposed).

Units: bytes and seconds per optimizer step, bandwidth in bytes per second.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Final

from catalog.domain.catalog import GpuModel
from catalog.domain.links import LinkProfile
from estimates.domain.formulas.collectives import (
    ALL_GATHER,
    ALL_REDUCE,
    ALL_TO_ALL,
    REDUCE_SCATTER,
    SEND_RECV,
    Group,
    all_reduce_seconds,
    bus_bandwidth,
    collective_seconds,
)
from estimates.domain.formulas.layout import Layout, job_layout
from estimates.domain.formulas.specs import EstimateInput
from estimates.domain.formulas.traffic import StepShape, step_shape

__all__ = [
    "BACKWARD_SHARE",
    "CollectiveCost",
    "Communication",
    "all_reduce_seconds",
    "bus_bandwidth",
    "communication",
    "job_communication",
]

# The share of a micro-batch's compute its backward pass takes (forward 1, backward 2).
BACKWARD_SHARE: Final = 2.0 / 3.0
# PyTorch DDP's default bucket (bucket_cap_mb=25): the last one cannot hide behind anything.
DDP_BUCKET_BYTES: Final = 25 * 2**20
DEFAULT_GPUS_PER_NODE: Final = 8
IN_UTILIZATION: Final = "inside the utilization (between a layer's matmuls)"


@dataclass(frozen=True)
class CollectiveCost:
    """One collective of the step: bytes through each GPU, seconds, seconds not hidden."""

    name: str
    collective: str
    ranks: int
    bytes_per_step: float
    seconds_per_step: float
    exposed_seconds_per_step: float
    link: str
    algorithm: str
    hidden_by: str


@dataclass(frozen=True)
class Communication:
    """One optimizer step's traffic and time on the given GPUs."""

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
    collectives: tuple[CollectiveCost, ...] = ()
    # The pipeline's idle share, (p - 1) / (m + p - 1); part of any utilization at this shape.
    pipeline_bubble: float = 0.0
    # A collective whose tier has no figure: time assumes it free, and the words say so.
    uncounted: tuple[str, ...] = ()


@dataclass(frozen=True)
class _Call:
    name: str
    collective: str
    group: Group
    size: float  # bytes of one call's buffer
    calls: float  # calls per optimizer step
    window: float | None  # seconds of compute that can hide it per call (None: in utilization)
    hidden_by: str
    always_exposed: float = 0.0  # bytes of each call that nothing hides (DDP's last bucket)


def communication(
    shape: StepShape, layout: Layout, gpu: GpuModel, compute_seconds_per_step: float
) -> Communication:
    """Every collective of the step on ``gpu``'s links, what is exposed, the efficiency."""
    links = gpu.link_profile()
    micro = compute_seconds_per_step / shape.accumulation
    costs: list[CollectiveCost] = []
    uncounted: list[str] = []
    for call in _calls(shape, layout, micro):
        cost = _cost(call, links)
        if cost is None:
            uncounted.append(call.name)
        elif cost.bytes_per_step > 0:
            costs.append(cost)
    exposed = sum(c.exposed_seconds_per_step for c in costs)
    total = compute_seconds_per_step + exposed
    return Communication(
        bytes_per_step=sum(c.bytes_per_step for c in costs),
        seconds_per_step=sum(c.seconds_per_step for c in costs),
        exposed_seconds_per_step=exposed,
        compute_seconds_per_step=compute_seconds_per_step,
        steps=shape.steps,
        bandwidth_bytes_per_second=_slowest(costs),
        scaling_efficiency=compute_seconds_per_step / total if total > 0 else 1.0,
        link="node-to-node" if layout.crosses_nodes else "card-to-card",
        global_batch_size=shape.global_batch,
        collectives=tuple(costs),
        pipeline_bubble=_bubble(layout.pipeline, shape.accumulation),
        uncounted=tuple(uncounted),
    )


def _cost(call: _Call, links: LinkProfile | None) -> CollectiveCost | None:
    once = collective_seconds(call.collective, call.size, call.group, links)
    if once is None:
        return None
    seconds = once.seconds * call.calls
    if call.window is None:
        exposed = 0.0
    else:
        tail = 0.0
        if call.always_exposed > 0 and call.size > 0:
            tail = once.seconds * min(1.0, call.always_exposed / call.size)
        exposed = max(once.seconds - call.window, tail) * call.calls
    bytes_per_step = call.size * _through_each(call) * call.calls
    return CollectiveCost(
        call.name,
        call.collective,
        call.group.ranks,
        bytes_per_step,
        seconds,
        exposed,
        once.link,
        once.algorithm,
        call.hidden_by,
    )


def _through_each(call: _Call) -> float:
    """Bytes through each GPU's link per byte of buffer (the bus-bandwidth factor)."""
    n = call.group.ranks
    if n <= 1:
        return 0.0
    if call.collective == ALL_REDUCE:
        return 2.0 * (n - 1) / n
    if call.collective == SEND_RECV:
        return 1.0
    return (n - 1) / n


def _slowest(costs: list[CollectiveCost]) -> float | None:
    rates = [
        c.bytes_per_step / c.seconds_per_step
        for c in costs
        if c.seconds_per_step > 0 and c.bytes_per_step > 0
    ]
    return min(rates) if rates else None


def _bubble(stages: int, micro_batches: int) -> float:
    if stages <= 1:
        return 0.0
    return (stages - 1) / (micro_batches + stages - 1)


def _calls(shape: StepShape, layout: Layout, micro: float) -> Iterator[_Call]:
    forward, backward = micro * (1 - BACKWARD_SHARE), micro * BACKWARD_SHARE
    yield from _gradient_calls(shape, layout, forward, backward)
    yield from _model_parallel_calls(shape, layout, micro)


def _gradient_calls(
    shape: StepShape, layout: Layout, forward: float, backward: float
) -> Iterator[_Call]:
    stage, a = shape.zero_stage, shape.accumulation
    groups = (
        ("gradients", shape.dense_gradient_bytes, layout.data_group),
        ("expert gradients", shape.expert_gradient_bytes, layout.expert_data_group),
    )
    for label, size, group in groups:
        if stage <= 1:
            # DDP's no_sync: one reduction, behind the last micro-batch's backward only.
            yield _Call(
                f"{label} all-reduce",
                ALL_REDUCE,
                group,
                size,
                1,
                backward,
                "the last micro-batch's backward (25 MiB buckets)",
                always_exposed=DDP_BUCKET_BYTES,
            )
        else:
            yield _Call(
                f"{label} reduce-scatter",
                REDUCE_SCATTER,
                group,
                size,
                a,
                # ZeRO-3 shares the backward with the weights' second gather.
                backward if stage == 2 else backward / 2,
                "each micro-batch's backward",
                always_exposed=DDP_BUCKET_BYTES,
            )
    if stage in (1, 2):
        yield _Call(
            "weights all-gather (after the optimizer step)",
            ALL_GATHER,
            layout.data_group,
            shape.weight_bytes,
            1,
            forward,
            "the next step's forward",
        )
    if stage == 3:
        yield from _zero3_gathers(shape, layout, forward, backward)


def _zero3_gathers(
    shape: StepShape, layout: Layout, forward: float, backward: float
) -> Iterator[_Call]:
    first_layer = shape.weight_bytes / max(1, shape.layers_per_stage)
    yield _Call(
        "weights all-gather (forward)",
        ALL_GATHER,
        layout.data_group,
        shape.weight_bytes,
        shape.accumulation,
        forward,
        "the forward, prefetched a layer ahead (the first layer's is exposed)",
        always_exposed=first_layer,
    )
    yield _Call(
        "weights all-gather (backward)",
        ALL_GATHER,
        layout.data_group,
        shape.weight_bytes,
        shape.accumulation,
        backward / 2,
        "the backward, prefetched a layer ahead",
    )


def _model_parallel_calls(shape: StepShape, layout: Layout, micro: float) -> Iterator[_Call]:
    a, layers = shape.accumulation, shape.layers_per_stage
    if layout.tensor > 1:
        group = layout.tensor_group
        inside = group.nodes == 1
        yield _Call(
            "tensor-parallel all-reduce",
            ALL_REDUCE,
            group,
            shape.activation_bytes,
            a * layers * (6 if shape.recompute else 4),
            None if inside else 0.0,
            IN_UTILIZATION if inside else "nothing: the tensor group spans nodes",
        )
    if layout.pipeline > 1:
        yield _Call(
            "pipeline sends",
            SEND_RECV,
            layout.pipeline_neighbours,
            shape.activation_bytes / layout.tensor,
            2 * a,
            None,
            "1F1B: the other micro-batches' compute",
        )
    if layout.expert > 1 and shape.routed_bytes > 0:
        yield _Call(
            "expert all-to-all",
            ALL_TO_ALL,
            layout.expert_group,
            shape.routed_bytes,
            4 * a * layers,
            0.0,
            "nothing: the routed tokens are on the critical path",
        )
    if layout.context > 1:
        ring = Group(2, 2 if layout.context_group.nodes == 1 else 1)
        attention = micro * shape.attention_share / max(1, layers)
        yield _Call(
            "context ring (key/value blocks)",
            SEND_RECV,
            ring,
            shape.kv_block_bytes,
            3 * (layout.context - 1) * a * layers,
            attention / max(1, 3 * (layout.context - 1)),
            "the attention of the block in hand",
        )


def job_communication(
    inp: EstimateInput, gpu: GpuModel, gpus: int, compute_seconds: float
) -> Communication:
    """The run's per-step traffic on ``gpus`` GPUs and what it adds to ``compute_seconds``."""
    profile = gpu.link_profile()
    per_node = inp.hardware.gpus_per_node or (
        profile.gpus_per_node if profile is not None else DEFAULT_GPUS_PER_NODE
    )
    layout = job_layout(inp, gpus, per_node)
    shape = step_shape(inp, layout)
    if gpus <= 1:
        return _single(shape, compute_seconds)
    return communication(shape, layout, gpu, compute_seconds / shape.steps)


def _single(shape: StepShape, compute_seconds: float) -> Communication:
    per_step = compute_seconds / shape.steps
    return Communication(
        0.0, 0.0, 0.0, per_step, shape.steps, None, 1.0, "card-to-card", shape.global_batch
    )
