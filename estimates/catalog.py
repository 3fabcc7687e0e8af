"""GPU models and the seed rental plans, as plain data.

Rules and units
---------------
* Pure module: no Django, no I/O. The Django side seeds its tables from these values and the
  estimate formulas (``estimates.formulas``) read them directly.
* ``memory_bytes`` is an int in bytes. Vendors print GPU memory as "80GB"; for these cards that
  figure is binary (nvidia-smi shows 81920 MiB for an A100-80GB), so it is stored as GiB x 2**30.
  Usable memory is a little lower (ECC, CUDA context); formulas add no headroom of their own.
* ``peak_flops`` maps a precision name ("fp32", "tf32", "bf16", "fp16", "fp8") to the **dense**
  peak in FLOP/s of one GPU, from the vendor datasheet or architecture whitepaper named in
  ``source``. Datasheets often print the 2:4 structured-sparsity figure (marked "*"): those are
  halved here, because training does not run on 2:4 sparse matrices. Tensor-core figures are the
  ones with FP32 accumulate, as mixed-precision training uses. A precision missing from the
  mapping has no tensor-core support on that card (e.g. no bf16 before Ampere, no fp8 before
  Ada/Hopper).
* Money is ``decimal.Decimal`` with its currency beside it, never a float. A rental plan's price
  is per lot: a lot that includes two GPUs costs its price once, not twice.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from types import MappingProxyType
from typing import Final

GIB: Final = 2**30
PRECISIONS: Final = ("fp32", "tf32", "bf16", "fp16", "fp8")


@dataclass(frozen=True)
class GpuModel:
    """One GPU model: memory in bytes and dense peak FLOP/s per precision."""

    name: str
    memory_bytes: int
    peak_flops: Mapping[str, float] = field(hash=False)
    source: str

    def __post_init__(self) -> None:
        unknown = set(self.peak_flops) - set(PRECISIONS)
        if unknown:
            raise ValueError(f"{self.name}: unknown precision(s) {sorted(unknown)}")
        # A read-only copy, so the catalogue cannot be edited through a shared instance.
        object.__setattr__(self, "peak_flops", MappingProxyType(dict(self.peak_flops)))

    def supports(self, precision: str) -> bool:
        """Whether the card has a (tensor-core or native) peak figure for ``precision``."""
        return precision in self.peak_flops


def _gpu(name: str, memory_gib: int, source: str, **peak_tflops: float) -> GpuModel:
    # Datasheets print TFLOPS; store FLOP/s.
    return GpuModel(
        name=name,
        memory_bytes=memory_gib * GIB,
        peak_flops={precision: tflops * 1e12 for precision, tflops in peak_tflops.items()},
        source=source,
    )


_A100_SOURCE = (
    "NVIDIA A100 Tensor Core GPU datasheet (SXM): FP32 19.5, TF32 156, BF16/FP16 312 TFLOPS "
    "dense (312/624/624 are the sparsity figures)"
)
_HOPPER_SXM_SOURCE = (
    "NVIDIA H100/H200 datasheet (SXM): FP32 67, TF32 989*, BF16/FP16 1,979*, FP8 3,958* TFLOPS "
    "with sparsity; halved for dense"
)

_CATALOG: Final = (
    _gpu(
        "V100-32GB",
        32,
        "NVIDIA Tesla V100 datasheet (SXM2): FP32 15.7, Tensor (FP16, FP32 accumulate) 125 TFLOPS; "
        "no bf16/tf32",
        fp32=15.7,
        fp16=125.0,
    ),
    _gpu(
        "T4",
        16,
        "NVIDIA T4 datasheet: FP32 8.1, mixed FP16/FP32 65 TFLOPS; no bf16/tf32",
        fp32=8.1,
        fp16=65.0,
    ),
    _gpu(
        "A10",
        24,
        "NVIDIA A10 datasheet: FP32 31.2, TF32 62.5 (125*), BF16/FP16 125 (250*) TFLOPS",
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
        fp32=91.6,
        tf32=183.0,
        bf16=362.05,
        fp16=362.05,
        fp8=733.0,
    ),
    _gpu("A100-40GB", 40, _A100_SOURCE, fp32=19.5, tf32=156.0, bf16=312.0, fp16=312.0),
    _gpu("A100-80GB", 80, _A100_SOURCE, fp32=19.5, tf32=156.0, bf16=312.0, fp16=312.0),
    _gpu(
        "H100-SXM",
        80,
        _HOPPER_SXM_SOURCE,
        fp32=67.0,
        tf32=494.5,
        bf16=989.5,
        fp16=989.5,
        fp8=1979.0,
    ),
    _gpu(
        "H100-PCIe",
        80,
        "NVIDIA H100 datasheet (PCIe): FP32 51, TF32 756*, BF16/FP16 1,513*, FP8 3,026* TFLOPS "
        "with sparsity; halved for dense",
        fp32=51.0,
        tf32=378.0,
        bf16=756.5,
        fp16=756.5,
        fp8=1513.0,
    ),
    # 141 GB is the exposed HBM3e (nvidia-smi shows ~140 GiB); same tensor cores as H100 SXM.
    _gpu(
        "H200",
        141,
        _HOPPER_SXM_SOURCE,
        fp32=67.0,
        tf32=494.5,
        bf16=989.5,
        fp16=989.5,
        fp8=1979.0,
    ),
    _gpu(
        "B200",
        180,
        "NVIDIA HGX B200 datasheet, per GPU: FP32 75, TF32 2.2 PF*, FP16/BF16 4.5 PF*, "
        "FP8 9 PF* with sparsity; halved for dense; 180 GB HBM3e per GPU (1.4 TB per 8)",
        fp32=75.0,
        tf32=1100.0,
        bf16=2250.0,
        fp16=2250.0,
        fp8=4500.0,
    ),
    _gpu(
        "RTX-3090",
        24,
        "NVIDIA Ampere GA102 architecture whitepaper: FP32 35.6, TF32 35.6, BF16/FP16 tensor "
        "with FP32 accumulate 71 TFLOPS dense (GeForce runs FP32 accumulate at half rate)",
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
        fp32=82.6,
        tf32=82.6,
        bf16=165.2,
        fp16=165.2,
        fp8=330.3,
    ),
)

GPUS: dict[str, GpuModel] = {gpu.name: gpu for gpu in _CATALOG}


def get_gpu(name: str) -> GpuModel:
    """The catalogue entry for ``name`` (exact, else case-insensitive); KeyError if unknown."""
    if name in GPUS:
        return GPUS[name]
    folded = {key.casefold(): gpu for key, gpu in GPUS.items()}
    try:
        return folded[name.casefold()]
    except KeyError:
        raise KeyError(f"unknown GPU model {name!r}; known: {', '.join(GPUS)}") from None


@dataclass(frozen=True)
class RentalPlanSpec:
    """A rental plan sold per lot: ``price`` buys ``gpus_per_lot`` GPUs for ``duration_hours``."""

    provider: str
    name: str
    gpu: str
    gpus_per_lot: int
    duration_hours: int
    price: Decimal
    currency: str
    illustrative: bool = False
    note: str = ""


RENTAL_PLANS: Final = (
    # Seed figures (IteraGPU catalogue, docs/domain.md §9): one RTX 4090 per lot.
    RentalPlanSpec("IteraGPU", "RTX 4090, 3 days", "RTX-4090", 1, 72, Decimal("47.14"), "USD"),
    RentalPlanSpec("IteraGPU", "RTX 4090, 7 days", "RTX-4090", 1, 168, Decimal("110.00"), "USD"),
    RentalPlanSpec("IteraGPU", "RTX 4090, 30 days", "RTX-4090", 1, 720, Decimal("390.00"), "USD"),
    RentalPlanSpec(
        "IteraGPU",
        "2x B200, 3 days",
        "B200",
        2,
        72,
        Decimal("648.00"),
        "USD",
        illustrative=True,
        note=(
            "Illustrative catalogue figure, not from the seed: the seed only says a B200 lot "
            "includes two GPUs and is priced per lot. 648.00 USD is 2 GPUs x 72 h x 4.50 USD."
        ),
    ),
)
