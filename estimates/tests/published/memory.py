"""Memory: long-context QLoRA peaks, torchtune's single-GPU peaks, the loss's own memory, and the
published "it fits" / "it does not" (docs/domain.md §24.2)."""

from __future__ import annotations

from typing import Any

from catalog.domain.catalog import GIB
from estimates.domain.formulas.activations import LOSS_BYTES_PER_LOGIT
from estimates.domain.formulas.specs import LoraSpec
from estimates.tests.published.cases import Case, run
from estimates.tests.test_finetuning import LLAMA31_8B

UNSLOTH = (
    "unslothai/unsloth README, 'Context length benchmarks' (Llama 3.1 8B and Llama 3.3 70B "
    "Instruct, 4-bit QLoRA on all linear layers, rank 32, batch 1, sequences padded; the "
    "'Hugging Face + FA2' column), https://github.com/unslothai/unsloth"
)
TORCHTUNE = (
    "pytorch/torchtune README, 'Memory and training speed' (Llama 3.1 8B, batch 2, packed 2,048, "
    "torch.compile), https://github.com/pytorch/torchtune"
)
LLAMA33_70B: dict[str, Any] = {
    "parameters": 70.55e9,
    "layers": 80,
    "hidden_size": 8192,
    "attention_heads": 64,
    "key_value_heads": 8,
    "intermediate_size": 28672,
    "vocab_size": 128256,
}
ALL_LINEAR = ("q", "k", "v", "o", "gate", "up", "down")
LITGPT = (
    "Lightning-AI/litgpt, tutorials/resource-tables.md, 'Finetuning with LoRA on 1 GPU' (A100 "
    "40GB, bf16-true, Alpaca: its longest Llama 2 example is 1,304 tokens; Max GPU RAM)"
)
LLAMA2: dict[str, dict[str, Any]] = {
    # GPT-style (4h, non-gated MLP) shapes from their config.json; the longest Alpaca example
    # is 1,044 tokens for phi-1.5's tokenizer, 1,034 for StableLM Alpha's.
    "phi-1.5": {
        "parameters": 1.42e9,
        "layers": 24,
        "hidden_size": 2048,
        "attention_heads": 32,
        "vocab_size": 51200,
    },
    "stablelm-3b": {
        "parameters": 3.64e9,
        "layers": 16,
        "hidden_size": 4096,
        "attention_heads": 32,
        "vocab_size": 50688,
    },
    "7b": {
        "parameters": 6.74e9,
        "layers": 32,
        "hidden_size": 4096,
        "attention_heads": 32,
        "intermediate_size": 11008,
        "vocab_size": 32000,
    },
    "13b": {
        "parameters": 13.02e9,
        "layers": 40,
        "hidden_size": 5120,
        "attention_heads": 40,
        "intermediate_size": 13824,
        "vocab_size": 32000,
    },
}


MXNET = (
    "apache/mxnet, example/image-classification README, memory of ResNet-50 training on a 12 GB "
    "TITAN X (SGD, fp32): 1,875 / 3,080 / 4,265 / 5,483 MiB at batch 10 / 20 / 30 / 40"
)
_PER_IMAGE = (5483 - 1875) / 30 * 2**20


def _resnet(batch: int) -> float:
    """ResNet-50 (25.6M parameters, 4.1 GFLOPs an image), the table's activations per image."""
    from estimates.domain.formulas import estimate
    from estimates.tests.test_cnn_memory_accumulation_and_precision_levers import resnet50

    return float(estimate(resnet50(batch, _PER_IMAGE)).memory.total)


_LONGEST = {"phi-1.5": 1044, "stablelm-3b": 1034}


def litgpt_lora(size: str, base: str, micro_batch: int) -> float:
    """LitGPT's finetune/lora.py: LoRA r=8 on q and v, SDPA, no recomputation, its loss in
    chunks of 128 tokens, the base in bf16 or NF4 (with double quantization: "nf4-dq")."""
    weights = "nf4" if base.startswith("nf4") else "bf16"
    result = run(
        {**LLAMA2[size], "weight_precision": weights, "double_quant": base == "nf4-dq"},
        {
            "tokens": 1e6,
            "sequence_length": _LONGEST.get(size, 1304),
            "micro_batch_size": micro_batch,
            "method": "lora",
            "lora": LoraSpec(8, ("q", "v")),
            "flash_attention": True,
            "loss": "chunked",
        },
        {"gpu": "A100-40GB"},
    )
    return float(result.memory.total)


def hf_qlora(model: dict[str, Any], context: int, gpu: str = "A100-80GB") -> Any:
    """Hugging Face's QLoRA as unsloth benchmarked it: NF4, LoRA r=32 on every linear layer,
    batch 1, FlashAttention 2, gradient checkpointing, its standard loss, 8-bit AdamW."""
    return run(
        model,
        {
            "tokens": 1e6,
            "sequence_length": context,
            "method": "qlora",
            "lora": LoraSpec(32, ALL_LINEAR),
            "activation_checkpointing": True,
            "flash_attention": True,
            "loss": "standard",
            "optimizer": "adamw_8bit",
        },
        {"gpu": gpu},
    )


def _torchtune(base: str) -> float:
    """torchtune's LoRA recipe on a bf16 or NF4 base (its QLoRA keeps the embedding and head
    16-bit: method lora with the base stored in nf4)."""
    result = run(
        {**LLAMA31_8B, "weight_precision": base},
        {
            "tokens": 1e6,
            "sequence_length": 2048,
            "micro_batch_size": 2,
            "method": "lora",
            "lora": LoraSpec(8, ("q", "v", "o", "gate", "up", "down")),
            "activation_checkpointing": True,
            "flash_attention": True,
            "loss": "chunked",
        },
        {"gpu": "RTX-4090"},
    )
    return float(result.memory.total)


_UNSLOTH_WHY = (
    "the run that fit at this context peaks just under the card (the next length did not fit); "
    "we count no allocator fragmentation and PEFT's fp32 copies of the embedding and head"
)
_TORCHTUNE_WHY = (
    "a check, not an interval case: torchtune's figures are with torch.compile, which fuses the "
    "chunked loss we count eager (5.25 bytes a logit: 2.6 GiB here), a setting no input states"
)

CASES: tuple[Case, ...] = (
    *(
        Case(
            f"unsloth-hf-qlora-8b-{context}-tokens-in-{vram}-gib",
            "memory.quantized",
            f"{UNSLOTH}: {vram} GB fits {context:,} tokens",
            vram * GIB,
            lambda n=context: float(hf_qlora(LLAMA31_8B, n).memory.total),
            0.30,
            _UNSLOTH_WHY,
        )
        for context, vram in (
            (932, 12),
            (2551, 16),
            (5789, 24),
            (12264, 40),
            (15502, 48),
            (28454, 80),
        )
    ),
    Case(
        "unsloth-hf-qlora-70b-6916-tokens-in-80-gib",
        "memory.quantized",
        f"{UNSLOTH}: Llama 3.3 70B on an 80 GB A100 fits 6,916 tokens",
        80 * GIB,
        lambda: float(hf_qlora(LLAMA33_70B, 6916).memory.total),
        0.30,
        _UNSLOTH_WHY,
    ),
    *(
        Case(
            f"litgpt-lora-{size}-{base}-micro-batch-{micro}",
            "memory.quantized" if base.startswith("nf4") else "memory",
            f"{LITGPT}: {size}, {base}, micro-batch {micro}: {gb} GB",
            gb * 1e9,
            lambda z=size, b=base, m=micro: litgpt_lora(z, b, m),
            0.30,
            "LitGPT prints torch.cuda.max_memory_allocated(), without the CUDA context we add",
        )
        for size, base, micro, gb in (
            ("phi-1.5", "bf16", 1, 4.82),
            ("phi-1.5", "bf16", 2, 6.76),
            ("phi-1.5", "bf16", 4, 10.68),
            ("stablelm-3b", "bf16", 1, 9.69),
            ("stablelm-3b", "bf16", 2, 12.10),
            ("stablelm-3b", "bf16", 4, 16.92),
            ("7b", "bf16", 1, 21.30),
            ("7b", "nf4", 1, 14.14),
            ("7b", "nf4-dq", 1, 13.84),
            ("7b", "bf16", 2, 29.07),
            ("13b", "bf16", 1, 38.12),
            ("13b", "nf4", 1, 23.14),
            ("13b", "nf4-dq", 1, 22.55),
        )
    ),
    *(
        Case(
            f"mxnet-resnet50-batch-{batch}",
            "memory",
            f"{MXNET}: batch {batch}, {mib:,} MiB",
            mib * 2**20,
            lambda b=batch: _resnet(b),
            0.10,
            "the per-image activations are read from batches 10 and 40 (inputs, not anchors of "
            "this figure); the framework's 512 MiB against MXNet's 380",
        )
        for batch, mib in ((20, 3080), (30, 4265))
    ),
    Case(
        "torchtune-lora-8b-rtx-4090",
        "check",
        f"{TORCHTUNE}: LoRA on 1x RTX 4090, 16.2 GiB peak",
        16.2 * GIB,
        lambda: _torchtune("bf16"),
        0.30,
        _TORCHTUNE_WHY,
    ),
    Case(
        "torchtune-qlora-8b-rtx-4090",
        "check",
        f"{TORCHTUNE}: QLoRA on 1x RTX 4090, 7.4 GiB peak",
        7.4 * GIB,
        lambda: _torchtune("nf4"),
        0.60,
        f"{_TORCHTUNE_WHY}; with a 5.6 GiB base the loss's eager chunks weigh half again",
    ),
    Case(
        "cce-gemma2-2b-baseline-loss",
        "check",
        "apple/ml-cross-entropy README, benchmark (A100, Gemma 2 2B, 8,192 tokens x 256,000 "
        "vocabulary): the baseline loss's forward and backward take 28,000 MB",
        28_000 * 2**20,
        lambda: 8192 * 256_000 * LOSS_BYTES_PER_LOGIT["standard"],
        0.20,
        "16 bytes a logit is the Hugging Face loss's decomposition; the benchmark's plain "
        "PyTorch loss peaks at 14 (its bf16 logits are an input, not counted)",
    ),
)
