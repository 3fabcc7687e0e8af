"""GPU models and the seed rental plans, as plain data.

Rules and units
---------------
* Pure module: no Django, no I/O. The Django side seeds its tables from these values and the
  estimate formulas (``estimates.domain.formulas``) read them directly.
* ``memory_bytes`` is an int in bytes. Vendors print GPU memory as "80GB"; for these cards that
  figure is binary (nvidia-smi shows 81920 MiB for an A100-80GB), so it is stored as GiB x 2**30.
  Usable memory is a little lower (ECC, CUDA context); formulas add no headroom of their own.
* ``peak_flops`` maps a precision name ("fp32", "tf32", "bf16", "fp16", "fp8", "fp4") to the
  **dense** peak in FLOP/s of one GPU, from the vendor datasheet or architecture whitepaper named in
  ``source``. Datasheets often print the 2:4 structured-sparsity figure (marked "*"): those are
  halved here, because training does not run on 2:4 sparse matrices. Tensor-core figures are the
  ones with FP32 accumulate, as mixed-precision training uses. A precision missing from the
  mapping has no tensor-core support on that card (e.g. no bf16 before Ampere, no fp8 before
  Ada/Hopper, no fp4 before Blackwell / CDNA 4). "fp4" is the 4-bit tensor-core format (NVFP4 /
  MXFP4): no training runs in it end to end, but the FP4 cost lever needs to know the card has it.
* Money is ``decimal.Decimal`` with its currency beside it, never a float. A rental plan's price
  is per lot: a lot that includes two GPUs costs its price once, not twice.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Final

from catalog.domain.bandwidth import INTERCONNECT, MEMORY_BANDWIDTH
from catalog.domain.gpu_names import normalize_gpu
from catalog.domain.links import LINKS, LinkProfile, profile_from_spec
from catalog.domain.prices import (
    HOURLY_RATES,
    RENTAL_PLANS,
    SEED_READ_ON,
    STALE_PRICE_DAYS,
    HourlyRateSpec,
    RentalPlanSpec,
    price_note,
)

__all__ = [
    "ALIASES",
    "GIB",
    "GPUS",
    "HOURLY_RATES",
    "PRECISIONS",
    "RENTAL_PLANS",
    "SEED_READ_ON",
    "STALE_PRICE_DAYS",
    "GpuModel",
    "HourlyRateSpec",
    "RentalPlanSpec",
    "canonical_name",
    "get_gpu",
    "price_note",
]

GIB: Final = 2**30
PRECISIONS: Final = ("fp32", "tf32", "bf16", "fp16", "fp8", "fp4")


@dataclass(frozen=True)
class GpuModel:
    """One GPU model: memory in bytes and dense peak FLOP/s per precision."""

    name: str
    memory_bytes: int
    peak_flops: Mapping[str, float] = field(hash=False)
    source: str
    # Board power (TDP) in watts, from the same datasheet; None where the vendor publishes none.
    tdp_watts: float | None = None
    # Unidirectional bandwidth per GPU to another GPU in the same node (NVLink, Infinity
    # Fabric or PCIe) and to a GPU in another node (the reference system's network per GPU), in
    # bytes per second; None where no figure is published. docs/domain.md §24.6.
    card_to_card_bytes_per_second: float | None = field(default=None, compare=False)
    node_to_node_bytes_per_second: float | None = field(default=None, compare=False)
    interconnect_source: str = field(default="", compare=False)
    # docs/domain.md §24.6: the measured bus bandwidth per collective on each tier (None: only
    # the specs above are known, and the collectives use them at a measured tier's efficiency).
    links: LinkProfile | None = field(default=None, compare=False)
    # HBM/GDDR bandwidth in bytes per second from the datasheet, for the roofline that projects
    # a pilot to another card where no measured pair exists (docs/domain.md §24.11).
    memory_bandwidth_bytes_per_second: float | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        unknown = set(self.peak_flops) - set(PRECISIONS)
        if unknown:
            raise ValueError(f"{self.name}: unknown precision(s) {sorted(unknown)}")
        # A read-only copy, so the catalogue cannot be edited through a shared instance.
        object.__setattr__(self, "peak_flops", MappingProxyType(dict(self.peak_flops)))

    def supports(self, precision: str) -> bool:
        """Whether the card has a (tensor-core or native) peak figure for ``precision``."""
        return precision in self.peak_flops

    def link_profile(self) -> LinkProfile | None:
        """The measured tiers, else a profile from the links' specs, else None."""
        if self.links is not None:
            return self.links
        return profile_from_spec(
            self.card_to_card_bytes_per_second,
            self.node_to_node_bytes_per_second,
            self.interconnect_source,
        )


def _gpu(
    name: str, memory_gib: int, source: str, tdp: float | None = None, **peak_tflops: float
) -> GpuModel:
    # Datasheets print TFLOPS; store FLOP/s.
    link = INTERCONNECT.get(name)
    return GpuModel(
        name=name,
        memory_bytes=memory_gib * GIB,
        peak_flops={precision: tflops * 1e12 for precision, tflops in peak_tflops.items()},
        source=source,
        tdp_watts=tdp,
        card_to_card_bytes_per_second=None if link is None else link[0],
        node_to_node_bytes_per_second=None if link is None else link[1],
        interconnect_source="" if link is None else link[2],
        links=LINKS.get(name),
        memory_bandwidth_bytes_per_second=MEMORY_BANDWIDTH.get(name),
    )


_A100_SOURCE = (
    "NVIDIA A100 Tensor Core GPU datasheet (SXM): FP32 19.5, TF32 156, BF16/FP16 312 TFLOPS "
    "dense (312/624/624 are the sparsity figures)"
)
_A100_PEAKS: Final = {"fp32": 19.5, "tf32": 156.0, "bf16": 312.0, "fp16": 312.0}
_HOPPER_SXM_SOURCE = (
    "NVIDIA H100/H200 datasheet (SXM): FP32 67, TF32 989*, BF16/FP16 1,979*, FP8 3,958* TFLOPS "
    "with sparsity; halved for dense"
)
# Dense TFLOPS of the Hopper SXM tensor cores (H100 SXM, H200 and H800 share them).
_HOPPER_SXM_PEAKS: Final = {
    "fp32": 67.0,
    "tf32": 494.5,
    "bf16": 989.5,
    "fp16": 989.5,
    "fp8": 1979.0,
}

_CATALOG: Final = (
    _gpu(
        "V100-32GB",
        32,
        "NVIDIA Tesla V100 datasheet (SXM2): FP32 15.7, Tensor (FP16, FP32 accumulate) 125 TFLOPS; "
        "no bf16/tf32",
        tdp=300,
        fp32=15.7,
        fp16=125.0,
    ),
    _gpu(
        "T4",
        16,
        "NVIDIA T4 datasheet: FP32 8.1, mixed FP16/FP32 65 TFLOPS; no bf16/tf32",
        tdp=70,
        fp32=8.1,
        fp16=65.0,
    ),
    _gpu(
        "A10",
        24,
        "NVIDIA A10 datasheet: FP32 31.2, TF32 62.5 (125*), BF16/FP16 125 (250*) TFLOPS",
        tdp=150,
        fp32=31.2,
        tf32=62.5,
        bf16=125.0,
        fp16=125.0,
    ),
    _gpu(
        "L4",
        24,
        "NVIDIA L4 datasheet: FP32 30.3, TF32 120*, BF16/FP16 242*, FP8 485* TFLOPS with "
        "sparsity; halved for dense",
        tdp=72,
        fp32=30.3,
        tf32=60.0,
        bf16=121.0,
        fp16=121.0,
        fp8=242.5,
    ),
    _gpu(
        "L40S",
        48,
        "NVIDIA L40S datasheet: FP32 91.6, TF32 183 (366*), BF16/FP16 362.05 (733*), "
        "FP8 733 (1,466*) TFLOPS",
        tdp=350,
        fp32=91.6,
        tf32=183.0,
        bf16=362.05,
        fp16=362.05,
        fp8=733.0,
    ),
    _gpu("A100-40GB", 40, _A100_SOURCE, 400, **_A100_PEAKS),
    _gpu("A100-80GB", 80, _A100_SOURCE, 400, **_A100_PEAKS),
    _gpu("H100-SXM", 80, _HOPPER_SXM_SOURCE, tdp=700, **_HOPPER_SXM_PEAKS),
    _gpu(
        "H100-PCIe",
        80,
        "NVIDIA H100 datasheet (PCIe): FP32 51, TF32 756*, BF16/FP16 1,513*, FP8 3,026* TFLOPS "
        "with sparsity; halved for dense",
        tdp=350,
        fp32=51.0,
        tf32=378.0,
        bf16=756.5,
        fp16=756.5,
        fp8=1513.0,
    ),
    # 141 GB is the exposed HBM3e (nvidia-smi shows ~140 GiB); same tensor cores as H100 SXM.
    _gpu("H200", 141, _HOPPER_SXM_SOURCE, tdp=700, **_HOPPER_SXM_PEAKS),
    _gpu(
        "B200",
        180,
        "NVIDIA HGX B200 datasheet, per GPU: FP32 75, TF32 2.2 PF*, FP16/BF16 4.5 PF*, "
        "FP8 9 PF* with sparsity; halved for dense; FP4 18 PF*, 9 PF dense; 180 GB HBM3e per GPU "
        "(1.4 TB per 8)",
        tdp=1000,
        fp32=75.0,
        tf32=1100.0,
        bf16=2250.0,
        fp16=2250.0,
        fp8=4500.0,
        fp4=9000.0,
    ),
    _gpu(
        "RTX-3090",
        24,
        "NVIDIA Ampere GA102 architecture whitepaper: FP32 35.6, TF32 35.6, BF16/FP16 tensor "
        "with FP32 accumulate 71 TFLOPS dense (GeForce runs FP32 accumulate at half rate)",
        tdp=350,
        fp32=35.6,
        tf32=35.6,
        bf16=71.0,
        fp16=71.0,
    ),
    _gpu(
        "RTX-4090",
        24,
        "NVIDIA Ada Lovelace (AD102) architecture whitepaper: FP32 82.6, TF32 82.6, BF16/FP16 "
        "tensor with FP32 accumulate 165.2, FP8 with FP32 accumulate 330.3 TFLOPS dense",
        tdp=450,
        fp32=82.6,
        tf32=82.6,
        bf16=165.2,
        fp16=165.2,
        fp8=330.3,
    ),
    _gpu(
        "A10G",
        24,
        "AWS EC2 G5 (NVIDIA A10G, 24 GB): FP32 35, TF32 35, BF16/FP16 tensor 70 TFLOPS dense, "
        "300 W; NVIDIA publishes no A10G datasheet (figures as AWS and Baseten's A10 vs A10G "
        "comparison state them)",
        tdp=300,
        fp32=35.0,
        tf32=35.0,
        bf16=70.0,
        fp16=70.0,
    ),
    _gpu(
        "H800",
        80,
        "NVIDIA H800 datasheet (SXM): FP32 67, TF32 989*, BF16/FP16 1,979*, FP8 3,958* TFLOPS "
        "with sparsity (the H100 SXM's tensor cores; NVLink and FP64 cut); halved for dense",
        tdp=700,
        **_HOPPER_SXM_PEAKS,
    ),
    _gpu(
        "MI300X",
        192,
        "AMD Instinct MI300X datasheet: 192 GB HBM3; FP32 vector 163.4, TF32 653.7, BF16/FP16 "
        "1,307.4, FP8 2,614.9 TFLOPS dense (sparsity figures double these); 750 W",
        tdp=750,
        fp32=163.4,
        tf32=653.7,
        bf16=1307.4,
        fp16=1307.4,
        fp8=2614.9,
    ),
    _gpu(
        "B300",
        288,
        "NVIDIA HGX B300 datasheet, per GPU: TF32 2.2 PF*, FP16/BF16 4.5 PF*, FP8 9 PF* with "
        "sparsity; halved for dense; FP4 144 PF* / 108 PF dense per 8 (13.5 PF per GPU); 288 GB "
        "HBM3e per GPU (2.3 TB per 8); FP32 75 TFLOPS",
        tdp=1100,
        fp32=75.0,
        tf32=1100.0,
        bf16=2250.0,
        fp16=2250.0,
        fp8=4500.0,
        fp4=13500.0,
    ),
    _gpu(
        "GB200",
        186,
        "NVIDIA GB200 NVL72 datasheet, per Blackwell GPU (/72): FP32 80, TF32 2.5 PF*, "
        "FP16/BF16 5 PF*, FP8 10 PF*, FP4 20 PF* with sparsity; halved for dense; 13.4 TB HBM3e "
        "/ 72",
        tdp=1200,
        fp32=80.0,
        tf32=1250.0,
        bf16=2500.0,
        fp16=2500.0,
        fp8=5000.0,
        fp4=10000.0,
    ),
    _gpu(
        "RTX-5090",
        32,
        "NVIDIA Blackwell GB202 (RTX 5090) architecture whitepaper: FP32 104.8, BF16/FP16 "
        "tensor with FP32 accumulate 209.5, FP8 419, FP4 1,676 TFLOPS dense (3,352 AI TOPS with "
        "sparsity); 32 GB GDDR7, 575 W",
        tdp=575,
        fp32=104.8,
        tf32=104.8,
        bf16=209.5,
        fp16=209.5,
        fp8=419.0,
        fp4=1676.0,
    ),
    _gpu(
        "MI355X",
        288,
        "AMD Instinct MI355X datasheet: 288 GB HBM3E; FP32 vector 157.3, FP16/BF16 2,516.6, "
        "FP8 5,033.2, MXFP4 10,066.4 TFLOPS dense (sparsity figures double these); 1,400 W",
        tdp=1400,
        fp32=157.3,
        bf16=2516.6,
        fp16=2516.6,
        fp8=5033.2,
        fp4=10066.4,
    ),
    # TPUs: Google publishes bf16 matrix peak per chip only (fp32 matmuls run as bf16 passes).
    _gpu(
        "TPU-v4",
        32,
        "Google Cloud TPU v4 documentation: 275 TFLOPS peak bf16 per chip, 32 GiB HBM2; Jouppi "
        "et al. (2023), 'TPU v4', ISCA: ~192 W maximum per chip",
        tdp=192,
        bf16=275.0,
    ),
    _gpu(
        "TPU-v5e",
        16,
        "Google Cloud TPU v5e documentation: 197 TFLOPS peak bf16 per chip, 16 GiB HBM2",
        bf16=197.0,
    ),
    _gpu(
        "TPU-v5p",
        95,
        "Google Cloud TPU v5p documentation: 459 TFLOPS peak bf16 per chip, 95 GiB HBM2e",
        bf16=459.0,
    ),
)

GPUS: dict[str, GpuModel] = {gpu.name: gpu for gpu in _CATALOG}

# Other names for catalog entries, as model cards and providers print them (compared ignoring
# case, spaces, hyphens, underscores and an "NVIDIA" prefix, like every GPU name).
ALIASES: Final[Mapping[str, str]] = MappingProxyType(
    {
        "H100-80GB": "H100-SXM",
        "H100": "H100-SXM",
        "H100-SXM5": "H100-SXM",
        "H100-80GB-HBM3": "H100-SXM",
        "A100": "A100-80GB",
        "A100-SXM4-80GB": "A100-80GB",
        "A100-SXM4-40GB": "A100-40GB",
        "V100": "V100-32GB",
        "H200-141GB": "H200",
        "H800-80GB": "H800",
        "MI300": "MI300X",
        "TPUv4": "TPU-v4",
        "TPUv5e": "TPU-v5e",
        "TPUv5p": "TPU-v5p",
        "GeForce-RTX-4090": "RTX-4090",
        "GeForce-RTX-3090": "RTX-3090",
        "GeForce-RTX-5090": "RTX-5090",
        "HGX-B300": "B300",
        "B300-288GB": "B300",
        "GB200-NVL72": "GB200",
        "MI355": "MI355X",
    }
)


def canonical_name(name: str) -> str | None:
    """The catalog name that ``name`` (a name or an alias) stands for; None if unknown."""
    wanted = normalize_gpu(name)
    for known in GPUS:
        if normalize_gpu(known) == wanted:
            return known
    for alias, known in ALIASES.items():
        if normalize_gpu(alias) == wanted:
            return known
    return None


def get_gpu(name: str) -> GpuModel:
    """The catalogue entry for ``name`` (exact, else normalized, else an alias); KeyError."""
    if name in GPUS:
        return GPUS[name]
    known = canonical_name(name) if isinstance(name, str) else None
    if known is None:
        raise KeyError(f"unknown GPU model {name!r}; known: {', '.join(GPUS)}")
    return GPUS[known]
