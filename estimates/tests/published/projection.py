"""Another GPU and another precision: pilots carried between cards by a measured pair or the
roofline (docs/domain.md §24.11), and FP8 against BF16 by the job's shape (§24.7)."""

from __future__ import annotations

from catalog.domain.catalog import get_gpu
from estimates.domain.formulas.precision import precision_speedup
from estimates.domain.formulas.projection import speedup
from estimates.tests.published.cases import LLM_FOUNDRY, MPT, Case

LAMBDA = (
    "lambdal/deeplearning-benchmark, pytorch/pytorch-train-throughput-fp16.csv (PyTorch "
    "training throughput, 1 GPU, fp16, BERT-large SQuAD sequences/s)"
)


def _carried(own: tuple[str, float], other: str) -> float:
    """A pilot's tokens/s per GPU on ``own`` carried to ``other`` (same count, same job)."""
    return own[1] * speedup(get_gpu(own[0]), get_gpu(other), "bf16").ratio


def _roofline(own: str, other: str, published_own: float) -> float:
    return published_own * speedup(get_gpu(own), get_gpu(other), "fp16").ratio


def _fp8(model: str, length: int) -> float:
    from estimates.domain.formulas import EstimateInput, HardwareSpec, ModelSpec, TrainingSpec

    inp = EstimateInput(
        ModelSpec(**MPT[model]),
        TrainingSpec(tokens=1e10, sequence_length=length),
        HardwareSpec(gpu="H100-SXM", count=8),
    )
    return precision_speedup(get_gpu("H100-SXM"), "bf16", "fp8", inp)[0]


CASES: tuple[Case, ...] = (
    *(
        Case(
            f"mpt-{model}-a100-to-h100-{length}",
            "time.projected.measured",
            f"{LLM_FOUNDRY}: MPT-{model} at {length:,} tokens on 8 GPUs, micro-batch {micro}: "
            f"A100-80GB {a100:,}, H100 {h100:,} tokens/s per GPU",
            h100,
            lambda a=a100: _carried(("A100-80GB", a), "H100-SXM"),
            0.18,
            "the A100-to-H100 ratio is read from the MPT-7B row (2.29x); the others spread 1.95x "
            "to 2.31x in the same table (2.29 / 1.95 = 1.17)",
            rate=True,
        )
        for model, length, micro, a100, h100 in (
            ("13b", 2048, 2, 2262, 4792),
            ("30b", 2048, 3, 916, 2002),
            ("1b", 2048, 14, 20513, 45455),
            ("760m", 2048, 24, 32434, 63147),
            ("3b", 512, 40, 12127, 27965),
        )
    ),
    Case(
        "mpt-7b-a100-to-h100-2048-anchor",
        "check",
        f"{LLM_FOUNDRY}: MPT-7B, 2,048 tokens, micro-batch 6: A100-80GB 4,641, H100 10,643",
        10643,
        lambda: _carried(("A100-80GB", 4641), "H100-SXM"),
        0.001,
        "anchor: the measured A100-to-H100 ratio is read from this row",
        anchor=True,
    ),
    *(
        Case(
            f"lambda-bert-large-{own.lower()}-to-{other.lower()}",
            "time.projected.roofline",
            f"{LAMBDA}: {own} {pub_own}, {other} {pub_other}",
            pub_other,
            lambda o=own, t=other, p=pub_own: _roofline(o, t, p),
            0.90,
            "no measured pair: the peaks' ratio (compute-bound roofline) misses clocks, power "
            "limits and kernels; the table's pairs fall 0.55x to 1.07x of it",
            rate=True,
        )
        for own, other, pub_own, pub_other in (
            ("V100-32GB", "A100-80GB", 57, 152),
            ("A10", "A100-80GB", 42, 152),
            ("RTX-3090", "RTX-4090", 52, 93),
            ("RTX-3090", "A100-80GB", 52, 152),
            ("H100-PCIe", "H100-SXM", 203, 301),
            ("A100-80GB", "H100-PCIe", 152, 203),
            ("A10", "RTX-4090", 42, 93),
        )
    ),
    *(
        Case(
            f"mpt-{model}-fp8-over-bf16-{length}",
            "check",
            f"{LLM_FOUNDRY}: MPT-{model} on 8 H100 at {length:,} tokens, BF16 {bf16:,} and FP8 "
            f"{fp8:,} tokens/s per GPU ({fp8 / bf16:.3f}x)",
            fp8 / bf16,
            lambda m=model, n=length: _fp8(m, n),
            0.10,
            "the matmuls' FP8 factor is read from torchao's Llama 3 8B figure, not these rows",
        )
        for model, length, bf16, fp8 in (
            ("1b", 512, 52275, 70315),
            ("1b", 8192, 29157, 32010),
            ("1b", 32768, 12025, 12580),
            ("3b", 512, 27965, 36527),
            ("3b", 8192, 16578, 19146),
            ("3b", 32768, 5873, 5856),
        )
    ),
)
