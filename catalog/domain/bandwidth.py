"""Each GPU's bandwidths from its datasheet: memory (for the roofline, docs/domain.md §24.11) and
the links' specs per GPU, one direction (card-to-card in a node, node-to-node of the reference
system; docs/domain.md §24.6). The measured bus bandwidths are in ``links``.

Units: bytes per second. Pure: no Django, no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Final

GB: Final = 1e9
# Memory bandwidth per GPU, GB/s, from the same datasheets as the peaks (HGX and NVL72 figures
# divided by their GPUs; TPUs from Google's Cloud TPU pages).
MEMORY_BANDWIDTH_GB_S: Final[Mapping[str, float]] = MappingProxyType(
    {
        "V100-32GB": 900,
        "T4": 320,
        "A10": 600,
        "A10G": 600,
        "L4": 300,
        "L40S": 864,
        "A100-40GB": 1555,
        "A100-80GB": 2039,
        "H100-SXM": 3350,
        "H100-PCIe": 2000,
        "H200": 4800,
        "H800": 3350,
        "B200": 8000,
        "B300": 8000,
        "GB200": 8000,
        "RTX-3090": 936,
        "RTX-4090": 1008,
        "RTX-5090": 1792,
        "MI300X": 5300,
        "MI355X": 8000,
        "TPU-v4": 1200,
        "TPU-v5e": 819,
        "TPU-v5p": 2765,
    }
)
MEMORY_BANDWIDTH: Final = MappingProxyType({k: v * GB for k, v in MEMORY_BANDWIDTH_GB_S.items()})
PCIE4 = "PCIe Gen4 x16: 64 GB/s bidirectional, 32 GB/s each way"
PCIE5 = "PCIe Gen5 x16: 128 GB/s bidirectional, 64 GB/s each way"
# (card-to-card, node-to-node per GPU, source), unidirectional bytes/s. Node-to-node is the
# vendor's reference system (DGX/HGX: one 200 or 400 Gb/s NIC per GPU); PCIe cards have none.
INTERCONNECT: Final[Mapping[str, tuple[float, float | None, str]]] = MappingProxyType(
    {
        "V100-32GB": (
            150 * GB,
            6.25 * GB,
            "V100 SXM2 datasheet: NVLink 300 GB/s; DGX-1 4x 100 Gb/s EDR IB per 8 GPUs",
        ),
        "T4": (16 * GB, None, "T4 datasheet: PCIe Gen3 x16, 32 GB/s bidirectional"),
        "A10": (32 * GB, None, f"A10 datasheet: {PCIE4}"),
        "A10G": (32 * GB, None, f"AWS G5: {PCIE4}"),
        "L4": (32 * GB, None, f"L4 datasheet: {PCIE4}"),
        "L40S": (32 * GB, None, f"L40S datasheet: {PCIE4}"),
        "A100-40GB": (300 * GB, 25 * GB, "A100 datasheet: NVLink 600 GB/s; DGX A100 8x 200 Gb/s"),
        "A100-80GB": (300 * GB, 25 * GB, "A100 datasheet: NVLink 600 GB/s; DGX A100 8x 200 Gb/s"),
        "H100-SXM": (450 * GB, 50 * GB, "H100 datasheet: NVLink 900 GB/s; DGX H100 8x 400 Gb/s"),
        "H100-PCIe": (64 * GB, None, f"H100 PCIe datasheet: {PCIE5} (NVLink bridge pairs only)"),
        "H200": (450 * GB, 50 * GB, "H200 datasheet: NVLink 900 GB/s; HGX H200 8x 400 Gb/s"),
        "H800": (200 * GB, 50 * GB, "H800 datasheet: NVLink 400 GB/s; 8x 400 Gb/s IB"),
        "B200": (900 * GB, 50 * GB, "HGX B200 datasheet: NVLink 5 1.8 TB/s; 8x 400 Gb/s"),
        "B300": (900 * GB, 100 * GB, "HGX B300 datasheet: NVLink 5 1.8 TB/s; 8x 800 Gb/s"),
        "GB200": (900 * GB, 50 * GB, "GB200 NVL72 datasheet: NVLink 5 1.8 TB/s per GPU, 72 GPUs"),
        "RTX-3090": (32 * GB, None, f"GA102 whitepaper: {PCIE4} (NVLink bridge pairs only)"),
        "RTX-4090": (32 * GB, None, f"AD102 whitepaper: {PCIE4}; no NVLink"),
        "RTX-5090": (64 * GB, None, f"GB202 whitepaper: {PCIE5}; no NVLink"),
        "MI300X": (448 * GB, 50 * GB, "MI300X datasheet: 7 Infinity Fabric links, 896 GB/s"),
        "MI355X": (537.6 * GB, 50 * GB, "MI355X datasheet: 7 Infinity Fabric links, 1,075 GB/s"),
    }
)
