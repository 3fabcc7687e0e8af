"""Link tiers: what a collective achieves between GPUs of one node and between nodes.

Rules and units (docs/domain.md §24.6)
--------------------------------------
* Pure module: no Django, no I/O. Bandwidths are nccl-tests **bus bandwidths** in bytes per
  second (the algorithm bandwidth S / t times the collective's factor: 2 (n - 1) / n for
  all-reduce, (n - 1) / n for all-gather, reduce-scatter and all-to-all), so a collective of S
  bytes over n ranks takes factor x S / busbw. Latency is the time of a small collective, in
  seconds.
* ``card_to_card`` is the tier inside a node (NVLink/NVSwitch, Infinity Fabric, PCIe with or
  without peer-to-peer): measured on a full node. ``peer_bytes_per_second`` is set for
  point-to-point meshes (Infinity Fabric), where a group of n ranks uses only its n - 1 links:
  its bus bandwidth is min(the full-node figure, (n - 1) x the measured two-rank figure).
* ``node_to_node`` is per GPU: the rate one GPU's NIC achieves inside a multi-node collective,
  derived from a published multi-node nccl-tests run as busbw x (k - 1) / (n - 1) (k nodes, n
  ranks; stas00's "ml-engineering", network chapter): the share of the bytes that leaves the
  node in NCCL's hierarchical all-reduce.
* Every figure names its source; a figure carried from another card says from which, and how.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Final

COLLECTIVES: Final = ("all_reduce", "all_gather", "reduce_scatter", "all_to_all")
_GB: Final = 1e9


@dataclass(frozen=True)
class TierFigures:
    """Measured bus bandwidth per collective on one link tier (bytes/s) and a small
    collective's time (s)."""

    name: str
    all_reduce: float
    all_gather: float
    reduce_scatter: float
    all_to_all: float
    latency_seconds: float
    source: str
    # Point-to-point meshes only: the bus bandwidth two ranks measure (one link).
    peer_bytes_per_second: float | None = None

    def bus_bandwidth(self, collective: str, ranks: int) -> float:
        """The bus bandwidth of ``collective`` over ``ranks`` ranks of this tier."""
        full = float(getattr(self, collective))
        if self.peer_bytes_per_second is None or ranks < 2:
            return full
        return min(full, (ranks - 1) * self.peer_bytes_per_second)

    def as_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            **{c: getattr(self, c) for c in COLLECTIVES},
            "latency_seconds": self.latency_seconds,
            "peer_bytes_per_second": self.peer_bytes_per_second,
            "source": self.source,
        }


@dataclass(frozen=True)
class LinkProfile:
    """A GPU's reference system: GPUs per node, the tier inside a node, the NIC tier per GPU."""

    gpus_per_node: int
    card_to_card: TierFigures | None
    node_to_node: TierFigures | None

    def as_json(self) -> dict[str, Any]:
        return {
            "gpus_per_node": self.gpus_per_node,
            "card_to_card": None if self.card_to_card is None else self.card_to_card.as_json(),
            "node_to_node": None if self.node_to_node is None else self.node_to_node.as_json(),
        }


def _tier(
    name: str,
    bus: float,
    source: str,
    *,
    all_reduce: float | None = None,
    latency: float = 40e-6,
    peer: float | None = None,
) -> TierFigures:
    # One figure for every collective unless the source measured all-reduce apart (NVLS).
    return TierFigures(
        name, all_reduce or bus, bus, bus, bus, latency, source, peer_bytes_per_second=peer
    )


_STAS = "stas00/ml-engineering, network/README.md"
_H200_NODE = (
    "stas00/ml-engineering, network/benchmarks/results/all-reduce-8xH200.md: nccl all_reduce "
    "on 8x H200 (NVLink 4, NVSwitch), 482.26 GB/s busbw at 16 GiB with NVLS, 367.61 GB/s with "
    "SHARP off (ring, taken for the other collectives); 32 KiB in 40 us"
)
NVLINK4: Final = _tier("NVLink 4 (NVSwitch)", 367.61 * _GB, _H200_NODE, all_reduce=482.26 * _GB)
NVLINK4_H800: Final = _tier(
    "NVLink 4, H800 (400 GB/s)",
    367.61 * _GB * 200 / 450,
    "the H100/H200 ring figure (367.61 GB/s) scaled to the H800's 200 GB/s per direction",
)
NVLINK3: Final = _tier(
    "NVLink 3 (NVSwitch)",
    235 * _GB,
    f"{_STAS}: nccl-tests all_reduce on an 8x A100 node, 235 GB/s (80% of 300 GB/s one way)",
)
# No V100 figure found: its 150 GB/s one way at the A100 node's measured 235/300.
NVLINK2: Final = _tier("NVLink 2 (cube mesh)", 150 * _GB * 235 / 300, f"carried: {NVLINK3.source}")
NVLINK5: Final = _tier(
    "NVLink 5 (NVSwitch)",
    740.64 * _GB,
    f"{_STAS}, 'Inter-node speed depends on intra-node speed': all_reduce on 8x B200 (P6-B200), "
    "740.64 GB/s busbw at 4 GiB",
)
_MI300X_NOTE = (
    f"{_STAS}: all_reduce_bench.py on 8x MI300X, 4 GiB: 312.912 GB/s busbw with 8 GPUs, "
    "47.671 GB/s with 2 (one 64 GB/s Infinity Fabric link per pair)"
)
INFINITY_FABRIC_3: Final = _tier(
    "Infinity Fabric (MI300X mesh)", 312.912 * _GB, _MI300X_NOTE, peer=47.671 * _GB
)
INFINITY_FABRIC_4: Final = _tier(
    "Infinity Fabric (MI355X mesh)",
    312.912 * _GB * 535.5 / 448,
    f"MI300X's measured figures scaled by the links' spec (76.5 vs 64 GB/s per link); "
    f"{_MI300X_NOTE}",
    peer=47.671 * _GB * 76.5 / 64,
)
_PCIE_P2P = (
    "docs.alayanew.com/en/docs/tech-blog/2026-05-06-nccl-tests (NCCL-tests in practice): 8x "
    "H100 PCIe without NVSwitch, 35-45 GB/s all_reduce busbw (40 GB/s taken, 63% of 63 GB/s)"
)
PCIE5_P2P: Final = _tier("PCIe 5 (peer-to-peer)", 40 * _GB, _PCIE_P2P)
PCIE4_P2P: Final = _tier(
    "PCIe 4 (peer-to-peer)", 40 * _GB * 31.5 / 63, f"PCIe 5's figure x 31.5/63; {_PCIE_P2P}"
)
PCIE3_P2P: Final = _tier(
    "PCIe 3 (peer-to-peer)", 40 * _GB * 15.75 / 63, f"PCIe 5's figure x 15.75/63; {_PCIE_P2P}"
)
_NO_P2P = (
    "Anthony-Hoo.github.io, posts/AutoDL_Multi-GPU_Interconnection_Test.md: two RTX 2080 Ti on "
    "PCIe 3 x16 with peer-to-peer unavailable move 5.71 GB/s one way (36% of 15.75 GB/s; "
    "GeForce cards have no peer-to-peer, NCCL stages through host memory)"
)
PCIE4_HOST: Final = _tier("PCIe 4 (no peer-to-peer)", 31.5 * _GB * 5.71 / 15.75, _NO_P2P)
PCIE5_HOST: Final = _tier("PCIe 5 (no peer-to-peer)", 63 * _GB * 5.71 / 15.75, _NO_P2P)

_A3_MEGA = (
    "lessizzmore/create-a3mega-ztan-fork, ztan-NCCL-test-result: all_reduce_perf on 16 H100 "
    "(two A3 Mega nodes, 8x 200 Gb/s GPUDirect-TCPXO), 8 GiB in 47,535 us, busbw 338.82 GB/s, "
    "so 338.82 x 1/15 = 22.59 GB/s per GPU's NIC; 8 B in ~123 us"
)
NIC_200G: Final = _tier("200 Gb/s NIC per GPU", 338.82 * _GB / 15, _A3_MEGA, latency=123e-6)
_P6_B200 = (
    f"{_STAS}, 'Inter-node speed depends on intra-node speed': all_reduce on 4x P6-B200 (8x "
    "400 Gb/s EFA per node), 377.34 GB/s busbw at 4 GiB, i.e. 377.34 x 3/31 = 36.52 GB/s per "
    "GPU (73% of 50 GB/s); latency as the A3 Mega run's"
)
NIC_400G: Final = _tier("400 Gb/s NIC per GPU", 377.34 * _GB * 3 / 31, _P6_B200, latency=123e-6)
NIC_800G: Final = _tier(
    "800 Gb/s NIC per GPU",
    2 * 377.34 * _GB * 3 / 31,
    f"the 400 Gb/s figure at twice the rate (same 73%); {_P6_B200}",
    latency=123e-6,
)
NIC_DGX1: Final = _tier(
    "DGX-1: 4x 100 Gb/s EDR per 8 GPUs",
    6.25 * _GB * 338.82 / 15 / 25,
    f"6.25 GB/s per GPU at the A3 Mega run's 90% of wire rate; {_A3_MEGA}",
    latency=123e-6,
)


def _profile(intra: TierFigures, inter: TierFigures | None, per_node: int = 8) -> LinkProfile:
    return LinkProfile(per_node, intra, inter)


# Each catalog GPU's reference system (docs/domain.md §24.6). PCIe cards are listed without a
# network: a multi-node job on them is refused no bandwidth, only not counted (and said so).
LINKS: Final[Mapping[str, LinkProfile]] = MappingProxyType(
    {
        "V100-32GB": _profile(NVLINK2, NIC_DGX1),
        "T4": _profile(PCIE3_P2P, None),
        "A10": _profile(PCIE4_P2P, None),
        "A10G": _profile(PCIE4_P2P, None),
        "L4": _profile(PCIE4_P2P, None),
        "L40S": _profile(PCIE4_P2P, None),
        "A100-40GB": _profile(NVLINK3, NIC_200G),
        "A100-80GB": _profile(NVLINK3, NIC_200G),
        "H100-SXM": _profile(NVLINK4, NIC_400G),
        "H100-PCIe": _profile(PCIE5_P2P, None),
        "H200": _profile(NVLINK4, NIC_400G),
        "H800": _profile(NVLINK4_H800, NIC_400G),
        "B200": _profile(NVLINK5, NIC_400G),
        "B300": _profile(NVLINK5, NIC_800G),
        "GB200": _profile(NVLINK5, NIC_400G, per_node=72),
        "RTX-3090": _profile(PCIE4_HOST, None),
        "RTX-4090": _profile(PCIE4_HOST, None),
        "RTX-5090": _profile(PCIE5_HOST, None),
        "MI300X": _profile(INFINITY_FABRIC_3, NIC_400G),
        "MI355X": _profile(INFINITY_FABRIC_4, NIC_400G),
    }
)

# Where only a link's spec is known (a custom accelerator, a row added by hand): the spec times
# the efficiency measured on the nearest published tier (NVLink 3: 235/300; a 400 Gb/s NIC: 73%).
SPEC_EFFICIENCY_IN_NODE: Final = 235 / 300
SPEC_EFFICIENCY_BETWEEN_NODES: Final = 377.34 * 3 / 31 / 50


def profile_from_spec(
    card_to_card: float | None, node_to_node: float | None, source: str
) -> LinkProfile | None:
    """A profile from the links' unidirectional specs alone (no measured figure)."""
    if card_to_card is None and node_to_node is None:
        return None
    note = f"the link's spec x the nearest measured tier's efficiency; spec: {source}"
    intra = (
        None
        if card_to_card is None
        else _tier("card-to-card (spec)", card_to_card * SPEC_EFFICIENCY_IN_NODE, note)
    )
    inter = (
        None
        if node_to_node is None
        else _tier(
            "node-to-node (spec)",
            node_to_node * SPEC_EFFICIENCY_BETWEEN_NODES,
            note,
            latency=123e-6,
        )
    )
    return LinkProfile(8, intra, inter)


def tier_from_json(value: Any) -> TierFigures | None:
    """A tier from its stored JSON; None for anything malformed (a hand-edited row)."""
    if not isinstance(value, Mapping):
        return None
    try:
        figures = [float(value[c]) for c in COLLECTIVES]
        latency = float(value.get("latency_seconds", 40e-6))
        peer = value.get("peer_bytes_per_second")
        peer_value = None if peer is None else float(peer)
    except (KeyError, TypeError, ValueError):
        return None
    if min(figures) <= 0 or latency < 0 or (peer_value is not None and peer_value <= 0):
        return None
    all_reduce, all_gather, reduce_scatter, all_to_all = figures
    return TierFigures(
        str(value.get("name", "")),
        all_reduce,
        all_gather,
        reduce_scatter,
        all_to_all,
        latency,
        str(value.get("source", "")),
        peer_bytes_per_second=peer_value,
    )


def profile_from_json(value: Any) -> LinkProfile | None:
    """A profile from its stored JSON (``LinkProfile.as_json``); None when absent or malformed."""
    if not isinstance(value, Mapping) or not value:
        return None
    per_node = value.get("gpus_per_node")
    if isinstance(per_node, bool) or not isinstance(per_node, int) or per_node < 1:
        return None
    intra = tier_from_json(value.get("card_to_card"))
    inter = tier_from_json(value.get("node_to_node"))
    if intra is None and inter is None:
        return None
    return LinkProfile(per_node, intra, inter)
