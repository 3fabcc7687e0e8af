"""Assumed utilization: published runs timed at the estimator's default 40% of peak (HFU), as a
planner without a pilot gets them; the residuals are how far real runs fall from that
assumption (docs/domain.md §24.12)."""

from __future__ import annotations

from typing import Any

from estimates.tests.published.cases import LLM_FOUNDRY, MPT, Case, per_gpu, run

NARAYANAN = (
    "Narayanan et al. (2021), Megatron-LM, table 1 and section 5.1 (https://arxiv.org/abs/"
    "2104.04473)"
)


def _mpt(model: str, gpu: str, gpus: int, length: int, micro: int, checkpointing: bool) -> float:
    """Tokens/s per GPU of an MPT row at the default utilization (FSDP, bf16)."""
    result = run(
        MPT[model],
        {
            "tokens": 1e10,
            "sequence_length": length,
            "micro_batch_size": micro,
            "activation_checkpointing": checkpointing,
        },
        {"gpu": gpu, "count": gpus, "zero_stage": 3},
    )
    return per_gpu(result, gpus)


def _days(model: dict[str, Any], tokens: float, hardware: dict[str, Any], **training: Any) -> float:
    result = run(model, {"tokens": tokens, "sequence_length": 2048, **training}, hardware)
    return result.wall_hours / 24


_WHY = (
    "an assumed 40% of peak against what the run achieved (its HFU): the spread is the "
    "assumption's, which this case measures and the interval reports"
)

CASES: tuple[Case, ...] = (
    *(
        Case(
            f"assumed-mpt-{model}-{gpu.lower()}-{gpus}-gpus-{length}",
            "time.assumed",
            f"{LLM_FOUNDRY}: MPT-{model} on {gpus} {gpu}, {length:,} tokens, micro-batch {micro}"
            f", HFU {hfu}%: {published:,} tokens/s per GPU",
            published,
            lambda m=model, g=gpu, n=gpus, s=length, mb=micro, c=ckpt: _mpt(m, g, n, s, mb, c),
            1.0,
            _WHY,
            rate=True,
        )
        for model, gpu, gpus, length, micro, ckpt, hfu, published in (
            ("13b", "H100-SXM", 64, 2048, 2, False, 39.86, 4800),
            ("30b", "H100-SXM", 16, 2048, 10, True, 57.42, 2263),
            ("7b", "H100-SXM", 8, 2048, 6, False, 46.44, 10643),
            ("1b", "H100-SXM", 32, 2048, 20, False, 41.52, 45130),
            ("3b", "H100-SXM", 8, 512, 40, False, 46.32, 27965),
            ("30b", "A100-80GB", 8, 2048, 3, True, 73.74, 916),
            ("7b", "A100-80GB", 8, 2048, 6, False, 64.23, 4641),
            ("13b", "A100-80GB", 8, 32768, 1, True, 68.92, 1016),
            ("7b", "A100-40GB", 64, 2048, 18, True, 67.64, 3665),
            ("760m", "A100-80GB", 8, 512, 96, False, 45.07, 29446),
        )
    ),
    *(
        Case(
            f"assumed-narayanan-{name}",
            "time.assumed",
            f"{NARAYANAN}: {words}",
            days,
            lambda p=parameters, t=tokens, n=gpus, pp=stages, a=accumulation: _days(
                {"parameters": p},
                t,
                {"gpu": "A100-80GB", "count": n, "tensor_parallel": 8, "pipeline_parallel": pp},
                activation_checkpointing=True,
                gradient_accumulation_steps=a,
            ),
            1.0,
            _WHY,
        )
        for name, words, days, parameters, tokens, gpus, stages, accumulation in (
            (
                "175b",
                "175B, 300B tokens on 1,024 A100 at 140 TFLOP/s: 33.9 days",
                33.9,
                175e9,
                300e9,
                1024,
                16,
                192,
            ),
            (
                "1t",
                "1T, 450B tokens on 3,072 A100 at 163 TFLOP/s: 83.2 days",
                83.2,
                1e12,
                450e9,
                3072,
                64,
                512,
            ),
        )
    ),
    Case(
        "assumed-llama-2-7b",
        "time.assumed",
        "Llama 2 model card (https://huggingface.co/meta-llama/Llama-2-7b): 184,320 A100-80GB "
        "GPU-hours for 2.0T tokens (on 1,024 GPUs: 7.5 days)",
        184_320 / 1024 / 24,
        lambda: _days(
            {"parameters": 6.74e9},
            2.0e12,
            {"gpu": "A100-80GB", "count": 1024, "zero_stage": 3},
        ),
        1.0,
        _WHY,
    ),
)
