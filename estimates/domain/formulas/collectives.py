"""One collective's time as NCCL runs it: ring inside a node, hierarchical (or ring over every
NIC) across nodes, all-to-all bounded by each GPU's NIC.

Rules (docs/domain.md §24.6):

* nccl-tests define the bus bandwidth B so that a collective of S bytes over n ranks takes
  factor x S / B: all-reduce 2 (n - 1) / n, all-gather, reduce-scatter and all-to-all
  (n - 1) / n. Inside a node B is the tier's measured figure (``catalog.domain.links``).
* Across k nodes with g ranks of the group in each, an all-reduce takes the faster of NCCL's
  two shapes: a ring through every NIC of the node (2 (n - 1) / n x S over min(B_node, g x
  B_nic)) and the hierarchical reduce-scatter / exchange / all-gather, whose phases overlap
  (max of 2 (g - 1) / g x S / B_node and 2 (k - 1) / k x S / g / B_nic). All-gather and
  reduce-scatter run as rings through every NIC. An all-to-all sends (g - 1) / n of S over
  the node's links and (n - g) / n over the GPU's own NIC, both at once.
* Each collective adds the tier's small-message latency (the slower tier's across nodes).

Checked: 16 H100 on two A3 Mega nodes (nccl-tests, 8 GiB): 47,535 us; 32 B200 on four
P6-B200 nodes (4 GiB): 377.34 GB/s busbw. Units: bytes, seconds, bytes per second.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Final

from catalog.domain.links import LinkProfile, TierFigures
from estimates.domain.formulas.checks import positive, positive_int

ALL_REDUCE: Final = "all_reduce"
ALL_GATHER: Final = "all_gather"
REDUCE_SCATTER: Final = "reduce_scatter"
ALL_TO_ALL: Final = "all_to_all"
SEND_RECV: Final = "send_recv"


@dataclass(frozen=True)
class Group:
    """A communicator: ``ranks`` GPUs, ``per_node`` of them in each node they span."""

    ranks: int
    per_node: int

    @property
    def nodes(self) -> int:
        return max(1, math.ceil(self.ranks / max(1, self.per_node)))


@dataclass(frozen=True)
class CollectiveTime:
    seconds: float
    algorithm: str
    link: str


def factor(collective: str, ranks: int) -> float:
    """nccl-tests' bus-bandwidth factor of ``collective`` over ``ranks`` ranks."""
    n = positive_int(ranks, "ranks")
    if collective == ALL_REDUCE:
        return 2.0 * (n - 1) / n
    if collective == SEND_RECV:
        return 1.0
    return (n - 1) / n


def all_reduce_seconds(size_bytes: float, gpus: int, bus_bandwidth: float) -> float:
    """Ring all-reduce time t = S x 2 (n - 1) / n / B (nccl-tests' bus bandwidth definition)."""
    return (
        positive(size_bytes, "size_bytes")
        * factor(ALL_REDUCE, gpus)
        / positive(bus_bandwidth, "bus_bandwidth")
    )


def bus_bandwidth(algorithm_bandwidth: float, gpus: int) -> float:
    """nccl-tests' all-reduce bus bandwidth: algbw x 2 (n - 1) / n."""
    return positive(algorithm_bandwidth, "algorithm_bandwidth") * factor(ALL_REDUCE, gpus)


def collective_seconds(
    collective: str, size_bytes: float, group: Group, links: LinkProfile | None
) -> CollectiveTime | None:
    """The time of one ``collective`` of ``size_bytes`` (the full buffer, as nccl-tests size it)
    over ``group``; None when the tier it needs has no figure."""
    if group.ranks <= 1 or size_bytes <= 0:
        return CollectiveTime(0.0, "none", "none")
    if links is None:
        return None
    intra, inter = links.card_to_card, links.node_to_node
    if group.nodes == 1 or (collective == SEND_RECV and group.per_node > 1):
        if intra is None:
            return None
        bandwidth = intra.bus_bandwidth(_measured(collective), group.ranks)
        seconds = factor(collective, group.ranks) * size_bytes / bandwidth
        return CollectiveTime(seconds + intra.latency_seconds, "ring", intra.name)
    if inter is None:
        return None
    return _across_nodes(collective, size_bytes, group, intra, inter)


def _measured(collective: str) -> str:
    # A point-to-point send runs at the tier's all-gather rate (one link, one direction).
    return ALL_GATHER if collective == SEND_RECV else collective


def _across_nodes(
    collective: str,
    size: float,
    group: Group,
    intra: TierFigures | None,
    inter: TierFigures,
) -> CollectiveTime:
    n, g, k = group.ranks, max(1, group.per_node), group.nodes
    nic = inter.bus_bandwidth(_measured(collective), 2)
    node = math.inf if intra is None or g == 1 else intra.bus_bandwidth(_measured(collective), g)
    latency = inter.latency_seconds
    link = inter.name if intra is None or g == 1 else f"{intra.name} + {inter.name}"
    if collective == SEND_RECV:
        return CollectiveTime(size / nic + latency, "send", inter.name)
    if collective == ALL_TO_ALL:
        inside = size * (g - 1) / n / node if g > 1 else 0.0
        return CollectiveTime(max(inside, size * (n - g) / n / nic) + latency, "pairwise", link)
    ring = factor(collective, n) * size / min(node, g * nic)
    if collective != ALL_REDUCE:
        return CollectiveTime(ring + latency, "ring", link)
    inside = 2.0 * (g - 1) / g * size / node if g > 1 else 0.0
    hierarchical = max(inside, 2.0 * (k - 1) / k * size / g / nic)
    if hierarchical < ring:
        return CollectiveTime(hierarchical + latency, "hierarchical", link)
    return CollectiveTime(ring + latency, "ring", link)
