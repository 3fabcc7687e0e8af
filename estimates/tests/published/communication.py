"""Scale-out: the classic multi-node runs, nccl-tests' collectives, and MosaicML's scaling rows
(docs/domain.md §24.6)."""

from __future__ import annotations

from typing import Any

from catalog.domain.links import NIC_200G, NIC_400G, NVLINK4, NVLINK5, LinkProfile
from estimates.domain.formulas import PilotSpec
from estimates.domain.formulas.collectives import Group, collective_seconds
from estimates.tests.published.cases import DAY, LLM_FOUNDRY, MPT, Case, per_gpu, run

NARAYANAN = (
    "Narayanan et al. (2021), 'Efficient Large-Scale Language Model Training on GPU Clusters "
    "Using Megatron-LM', section 5.1 (https://arxiv.org/abs/2104.04473)"
)
STAS = "stas00/ml-engineering, network/README.md, 'Inter-node speed depends on intra-node speed'"
A3_MEGA = "lessizzmore/create-a3mega-ztan-fork, ztan-NCCL-test-result (nccl-tests all_reduce_perf)"


def _narayanan(parameters: float, tokens: float, gpus: int, pp: int, batch: int, x: float) -> float:
    """The paper's end-to-end estimate 8 T P / (n X) as our inputs: 6PT with recomputation
    (x 4/3) at X / 312 TFLOP/s of HFU, tensor 8 per node, the paper's batch."""
    data = gpus // (8 * pp)
    result = run(
        {"parameters": parameters},
        {
            "tokens": tokens,
            "sequence_length": 2048,
            "activation_checkpointing": True,
            "gradient_accumulation_steps": batch // data,
        },
        {
            "gpu": "A100-80GB",
            "count": gpus,
            "tensor_parallel": 8,
            "pipeline_parallel": pp,
            "utilization": x / 312e12,
        },
    )
    return result.wall_hours / DAY


LLAMA_65B: dict[str, Any] = {
    "parameters": 65.2e9,
    "layers": 80,
    "hidden_size": 8192,
    "attention_heads": 64,
    "intermediate_size": 22016,
    "vocab_size": 32000,
}


def _llama_65b() -> float:
    """1.4T tokens at 380 tokens/s per GPU on 2,048 A100-80GB: that throughput as MFU (our
    6N + 12 L h s per token), FSDP, batch 4M tokens (2,048 sequences of 2,048)."""
    per_token = 6 * 65.2e9 + 12 * 80 * 8192 * 2048
    result = run(
        LLAMA_65B,
        {"tokens": 1.4e12, "sequence_length": 2048, "activation_checkpointing": True},
        {
            "gpu": "A100-80GB",
            "count": 2048,
            "zero_stage": 3,
            "utilization": 380 * per_token / 312e12,
            "utilization_kind": "mfu",
        },
    )
    return result.wall_hours / DAY


def _halving(zero_stage: int) -> float:
    hours = [
        run(
            MPT["7b"],
            {"tokens": 1e10, "sequence_length": 2048, "micro_batch_size": 4},
            {"gpu": "H100-SXM", "count": count, "zero_stage": zero_stage},
        ).wall_hours
        for count in (8, 16)
    ]
    return hours[1] / hours[0]


def _all_reduce_us(size: float, gpus: int, links: LinkProfile) -> float:
    found = collective_seconds("all_reduce", size, Group(gpus, min(gpus, 8)), links)
    assert found is not None
    return found.seconds * 1e6


def _scaled(model: str, gpu: str, pilot: tuple[int, float], target: int, micro: int) -> float:
    """A pilot's whole throughput on ``pilot[0]`` GPUs carried to ``target`` (FSDP)."""
    result = run(
        MPT[model],
        {"tokens": 1e10, "sequence_length": 2048, "micro_batch_size": micro},
        {"gpu": gpu, "count": target, "zero_stage": 3},
        PilotSpec(tokens_per_second=pilot[1], gpus=pilot[0]),
    )
    return per_gpu(result, target)


def _lengthened(gpu: str, pilot: float, length: int) -> float:
    """MPT-7B on 8 GPUs, 65,536 tokens a micro-batch at every length: a pilot at 4,096 tokens
    carried to ``length`` (docs/domain.md §24.4)."""
    result = run(
        MPT["7b"],
        {
            "tokens": 1e10,
            "sequence_length": length,
            "micro_batch_size": 65536 // length,
            "activation_checkpointing": True,
        },
        {"gpu": gpu, "count": 8, "zero_stage": 3},
        PilotSpec(tokens_per_second=pilot * 8, gpus=8, sequence_length=4096),
    )
    return per_gpu(result, 8)


_A3 = LinkProfile(8, NVLINK4, NIC_200G)
_P6 = LinkProfile(8, NVLINK5, NIC_400G)
# (case, source, what it says, microseconds, GiB, ranks, links, tolerance, why).
_NCCL: tuple[tuple[str, str, str, float, int, int, LinkProfile, float, str], ...] = (
    (
        "a3-mega-16-h100-8gib",
        A3_MEGA,
        "16 H100 on two A3 Mega nodes, 8 GiB all-reduce in 47,535 us",
        47_535,
        8,
        16,
        _A3,
        0.01,
        "anchor: the 200 Gb/s NIC's per-GPU rate is read from this row",
    ),
    (
        "a3-mega-16-h100-1gib",
        A3_MEGA,
        "the same run, 1 GiB in 6,759 us",
        6_759,
        1,
        16,
        _A3,
        0.15,
        "a bandwidth + latency model misses NCCL's protocol overheads at 1 GiB (10% here)",
    ),
    (
        "a3-mega-16-h100-2gib",
        A3_MEGA,
        "the same run, 2 GiB in 12,646 us",
        12_646,
        2,
        16,
        _A3,
        0.10,
        "as at 1 GiB, smaller (5%) as the size grows",
    ),
    (
        "p6-b200-32-gpus-4gib",
        STAS,
        "32 B200 on four P6-B200 nodes, 4 GiB all-reduce at 377.34 GB/s busbw",
        4 * 2**30 * 2 * 31 / 32 / 377.34e9 * 1e6,
        4,
        32,
        _P6,
        0.01,
        "anchor: the 400 Gb/s NIC's per-GPU rate is read from this row",
    ),
    (
        "p6-b200-32-gpus-16gib",
        STAS,
        "the same run, 16 GiB at 381.80 GB/s busbw",
        16 * 2**30 * 2 * 31 / 32 / 381.80e9 * 1e6,
        16,
        32,
        _P6,
        0.03,
        "the 4 GiB row's rate carried to 16 GiB: the table's own busbw moves 1.2%",
    ),
)
_SCALING = "the table's own rows spread 3.5% across counts (1B: 46,037 on 16, 44,402 on 64)"
_NEAR = (
    "within 4x the length (§24.4: 'close enough for planning'); the table's own MFU at twice "
    "the length falls 8% on H100 where PaLM's count keeps it level"
)
_FAR = (
    "beyond 4x the length the rescale is an extrapolation, and the answer says so: MosaicML's "
    "2023 FlashAttention ran long attention at ~70% of the matmuls' MFU on H100 (MFU 40.4% at "
    "4,096 tokens, 28.6% at 65,536), which PaLM's count does not see"
)

CASES: tuple[Case, ...] = (
    Case(
        "narayanan-175b-1024-a100",
        "check",
        f"{NARAYANAN}: 175B, 300B tokens, 1,024 A100 at 140 TFLOP/s: about 34 days (33.9)",
        33.9,
        lambda: _narayanan(175e9, 300e9, 1024, 16, 1536, 140e12),
        0.02,
        "issue 31: within 2%; the paper's 8TP/(nX) ignores the collectives we add (0.4%)",
    ),
    Case(
        "narayanan-1t-3072-a100",
        "check",
        f"{NARAYANAN}: 1T, 450B tokens, 3,072 A100 at 163 TFLOP/s: 83.2 days",
        83.2,
        lambda: _narayanan(1e12, 450e9, 3072, 64, 3072, 163e12),
        0.02,
        "issue 31: within 2%",
    ),
    Case(
        "llama-65b-2048-a100-21-days",
        "check",
        "Touvron et al. (2023), LLaMA, section 2.4: 380 tokens/s/GPU on 2,048 A100-80GB, 1.4T "
        "tokens in about 21 days (https://arxiv.org/abs/2302.13971)",
        21.0,
        _llama_65b,
        0.03,
        "'about 21 days' is 20.8 rounded (1%), plus FSDP's exposed first-layer gathers",
    ),
    Case(
        "sixteen-gpus-halve-eight-ddp",
        "check",
        f"{LLM_FOUNDRY}: H100 13B 2,048 tokens, 4,792 tokens/s/GPU on 8, 4,767 on 16",
        0.5,
        lambda: _halving(0),
        0.02,
        "16 GPUs on two nodes halve 8's wall hours within 2% (the table: 0.5026)",
    ),
    Case(
        "sixteen-gpus-halve-eight-fsdp",
        "check",
        f"{LLM_FOUNDRY}: the same rows, FULL_SHARD",
        0.5,
        lambda: _halving(3),
        0.02,
        "the same claim with ZeRO-3's gathers prefetched",
    ),
    *(
        Case(
            f"nccl-{name}",
            "check",
            f"{source}: {words}",
            microseconds,
            lambda size=gib * 2**30, n=ranks, links=profile: _all_reduce_us(size, n, links),
            tolerance,
            why,
            anchor=tolerance == 0.01,
        )
        for name, source, words, microseconds, gib, ranks, profile, tolerance, why in _NCCL
    ),
    *(
        Case(
            f"mpt-{model}-{gpu.lower()}-{first}-to-{target}-gpus",
            "time.pilot.many_nodes",
            f"{LLM_FOUNDRY}: MPT-{model} on {gpu}, 2,048 tokens, micro-batch {micro}, "
            f"{pilot:,.0f} tokens/s on {first} GPUs, {published:,} per GPU on {target}",
            published,
            lambda m=model, g=gpu, f=first, p=pilot, t=target, mb=micro: _scaled(
                m, g, (f, p), t, mb
            ),
            0.05,
            _SCALING,
            rate=True,
        )
        for model, gpu, first, pilot, target, micro, published in (
            ("13b", "H100-SXM", 8, 38336, 16, 2, 4767),
            ("13b", "H100-SXM", 8, 38336, 32, 2, 4811),
            ("13b", "H100-SXM", 8, 38336, 64, 2, 4800),
            ("1b", "H100-SXM", 16, 736596, 32, 20, 45130),
            ("1b", "H100-SXM", 16, 736596, 64, 20, 44402),
            ("3b", "H100-SXM", 32, 736701, 64, 6, 22525),
            ("760m", "H100-SXM", 16, 1096819, 32, 24, 67971),
            ("7b", "A100-40GB", 32, 119202, 64, 18, 3665),
            ("7b", "A100-40GB", 32, 119202, 128, 18, 3623),
            ("13b", "A100-40GB", 64, 126479, 128, 16, 1972),
            ("3b", "A100-40GB", 64, 623167, 128, 6, 9538),
        )
    ),
    *(
        Case(
            f"mpt-7b-{gpu.lower()}-4096-to-{length}-tokens",
            "time.pilot.one_node",
            f"{LLM_FOUNDRY}: MPT-7B on 8 {gpu}, 65,536 tokens a micro-batch, {pilot:,} "
            f"tokens/s/GPU at 4,096 tokens, {published:,} at {length:,}",
            published,
            lambda g=gpu, p=pilot, n=length: _lengthened(g, p, n),
            0.12 if length <= 4 * 4096 else 0.45,
            _NEAR if length <= 4 * 4096 else _FAR,
            rate=True,
        )
        for gpu, pilot, length, published in (
            ("A100-80GB", 3684, 8192, 3206),
            ("A100-80GB", 3684, 16384, 2453),
            ("A100-80GB", 3684, 32768, 1672),
            ("A100-80GB", 3684, 65536, 1013),
            ("H100-SXM", 8611, 8192, 6935),
            ("H100-SXM", 8611, 32768, 3318),
            ("H100-SXM", 8611, 65536, 1956),
        )
    ),
)
