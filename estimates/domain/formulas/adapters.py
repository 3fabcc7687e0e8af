"""Adapters (LoRA, QLoRA): the trainable count, how the frozen base is stored, what they weigh.

Rules (docs/domain.md §24.1, §24.2):

* LoRA (Hu et al. 2021) adds to each targeted linear map W (d_in x d_out) two matrices A
  (d_in x r) and B (r x d_out): r (d_in + d_out) trainable parameters per module, no bias. In a
  decoder layer with hidden size h, MLP width f and grouped-query attention (key/value heads
  g of a heads, head size h / a): q and o map h -> h, k and v map h -> g h / a, gate and up
  h -> f, down f -> h. PEFT's ``print_trainable_parameters`` prints exactly this sum x layers.
* The frozen base is stored at ``weight_precision``. bitsandbytes' 4-bit types (nf4, fp4)
  quantize in blocks of 64 weights with one fp32 absmax each, 4 + 32/64 = 4.5 bits per weight;
  double quantization stores those constants in 8 bits with one fp32 constant per 256 of them,
  4 + 8/64 + 32/(64 x 256) = 4.127 bits (Dettmers et al. 2023, QLoRA, section 3). int8
  (LLM.int8) keeps 8 bits plus one fp32 scale per row, counted as 8 bits. The embedding and
  the output layer (2 x vocab x hidden when both are known) stay unquantized: bitsandbytes
  replaces ``nn.Linear`` layers only and skips the output head; QLoRA's recipe (PEFT's
  ``prepare_model_for_kbit_training``) then casts them to fp32 (4 bytes), a LoRA on a quantized
  base (``method: lora`` with ``weight_precision``, torchtune's QLoRA) keeps them 16-bit.
  int4 (GPTQ, AWQ) stores groups of 128 with an fp16 scale and a 4-bit zero: 4.156 bits.
* An adapter checkpoint holds the trainable parameters only, at 2 bytes (16-bit) each, as PEFT
  saves them (``adapter_model.safetensors``); resuming needs the optimizer states too.

Units: parameter counts (float), bytes (int, rounded up).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Final

from estimates.domain.formulas.checks import EstimateInputError
from estimates.domain.formulas.shape import attention_blocks, stack_layers
from estimates.domain.formulas.specs import (
    TARGET_MODULES,
    EstimateInput,
    LoraSpec,
    ModelSpec,
    ModuleShape,
    TrainingSpec,
)

ATTENTION_MODULES: Final = frozenset({"q", "k", "v", "o", "qkv"})

# Bits per stored weight, before the quantization constants (§24.2).
_STORAGE_BITS: Final = {
    "fp32": 32.0,
    "bf16": 16.0,
    "fp16": 16.0,
    "fp8": 8.0,
    "int8": 8.0,
    "int4": 4.0,
    "nf4": 4.0,
    "fp4": 4.0,
}
_TRAINING_STORAGE: Final = {"fp32": "fp32", "tf32": "fp32", "bf16": "bf16", "fp16": "fp16"}
# bitsandbytes' 4-bit blocksize and the double-quantization blocksize of the constants.
NF4_BLOCKSIZE: Final = 64
# GPTQ and AWQ pack int4 weights in groups of 128 with an fp16 scale and a 4-bit zero point
# each (AutoGPTQ's and AutoAWQ's default group_size=128): 4 + (16 + 4) / 128 bits per weight.
INT4_GROUP_SIZE: Final = 128
DOUBLE_QUANT_BLOCKSIZE: Final = 256
ADAPTER_CHECKPOINT_BYTES_PER_PARAMETER: Final = 2


def module_shapes(
    hidden_size: int,
    intermediate_size: int,
    attention_heads: int,
    key_value_heads: int,
    attention_width: int | None = None,
) -> dict[str, tuple[int, int]]:
    """(d_in, d_out) of a layer's linear modules, fused ones included (docs/domain.md §24.1)."""
    width = attention_width or hidden_size
    kv = round(key_value_heads * width / attention_heads)
    return {
        "q": (hidden_size, width),
        "k": (hidden_size, kv),
        "v": (hidden_size, kv),
        "o": (width, hidden_size),
        "qkv": (hidden_size, width + 2 * kv),
        "gate": (hidden_size, intermediate_size),
        "up": (hidden_size, intermediate_size),
        "gate_up": (hidden_size, 2 * intermediate_size),
        "down": (intermediate_size, hidden_size),
    }


def lora_parameters_per_layer(
    rank: int,
    targets: Sequence[str],
    hidden_size: int,
    intermediate_size: int,
    attention_heads: int,
    key_value_heads: int,
    attention_width: int | None = None,
) -> int:
    """LoRA's trainable parameters in one decoder layer: r (d_in + d_out) per targeted module.

    Source: Hu et al. (2021), "LoRA", section 4 (W + BA, B of d x r, A of r x k); the shapes of
    a Llama-style layer as above (docs/domain.md §24.1). A fused module (``qkv``, ``gate_up``)
    has one A for its input: r (h + its whole output).
    """
    shapes = module_shapes(
        hidden_size, intermediate_size, attention_heads, key_value_heads, attention_width
    )
    return sum(rank * (shapes[t][0] + shapes[t][1]) for t in dict.fromkeys(targets))


def lora_targets(lora: LoraSpec) -> tuple[str | ModuleShape, ...]:
    if lora.target_modules == "all-linear":
        return TARGET_MODULES
    if isinstance(lora.target_modules, str):
        raise EstimateInputError(
            "training.lora.target_modules",
            'give "all-linear", or a list of module names or shapes',
        )
    return tuple(lora.target_modules)


def target_names(targets: Sequence[str | ModuleShape]) -> str:
    return " ".join(t if isinstance(t, str) else t.name for t in targets)


def _adapter_count(model: ModelSpec, lora: LoraSpec) -> float:
    """Adapters of every layer: attention modules in each attention block (an encoder-decoder's
    decoder has two), MLP modules in each layer of every stack, shapes ``count`` per layer."""
    assert model.layers and model.hidden_size and model.attention_heads
    targets = lora_targets(lora)
    shapes = module_shapes(
        model.hidden_size,
        model.intermediate_size or 4 * model.hidden_size,
        model.attention_heads,
        model.key_value_heads or model.attention_heads,
        model.attention_width,
    )
    total = 0.0
    for target in dict.fromkeys(targets):
        if isinstance(target, ModuleShape):
            per = lora.rank * (target.in_features + target.out_features) * target.count
            total += per * model.layers
            continue
        d_in, d_out = shapes[target]
        blocks = attention_blocks(model) if target in ATTENTION_MODULES else stack_layers(model)
        total += lora.rank * (d_in + d_out) * blocks
    return total


def trainable_parameters(model: ModelSpec, training: TrainingSpec) -> float:
    """The parameters that get gradients: all for full training, the adapters' otherwise."""
    if training.method == "full":
        return model.parameters
    if training.trainable_parameters is not None:
        return training.trainable_parameters
    if not (model.layers and model.hidden_size and model.attention_heads):
        raise EstimateInputError(
            "training.trainable_parameters",
            "give it, or model.layers, model.hidden_size and model.attention_heads to count the "
            "adapter from the shape",
        )
    return _adapter_count(model, training.lora or LoraSpec())


def storage_precision(model: ModelSpec, training: TrainingSpec) -> str:
    """How the base weights are stored: as given, nf4 for qlora, else the training precision."""
    if model.weight_precision is not None:
        return model.weight_precision
    if training.method == "qlora":
        return "nf4"
    return _TRAINING_STORAGE.get(training.precision, "bf16")


def bits_per_weight(precision: str, double_quant: bool) -> float:
    """Stored bits per weight, the quantization constants included (docs/domain.md §24.2)."""
    bits = _STORAGE_BITS[precision]
    if precision == "int4":
        return bits + (16 + 4) / INT4_GROUP_SIZE
    if precision in ("nf4", "fp4"):
        if double_quant:
            return bits + 8 / NF4_BLOCKSIZE + 32 / (NF4_BLOCKSIZE * DOUBLE_QUANT_BLOCKSIZE)
        return bits + 32 / NF4_BLOCKSIZE
    return bits


def unquantized_parameters(model: ModelSpec, precision: str) -> float:
    """Parameters kept in 16 bits beside a quantized base: the embedding and the output layer."""
    if precision not in ("int8", "int4", "nf4", "fp4") or not (
        model.vocab_size and model.hidden_size
    ):
        return 0.0
    return min(model.parameters, 2.0 * model.vocab_size * model.hidden_size)


def frozen_base_bytes(model: ModelSpec, training: TrainingSpec, parameters: float) -> int:
    """Bytes of ``parameters`` frozen base weights at their storage precision (§24.2)."""
    precision = storage_precision(model, training)
    share = parameters / model.parameters
    kept = unquantized_parameters(model, precision) * share
    quantized = parameters - kept
    # QLoRA's recipe (PEFT's prepare_model_for_kbit_training, the QLoRA repository) casts every
    # module it did not quantize to fp32 "for stability": the embedding and the head at 4 bytes.
    kept_bytes = 4 if training.method == "qlora" else 2
    bits = bits_per_weight(precision, model.double_quant)
    return math.ceil(quantized * bits / 8 + kept * kept_bytes)


def adapter_checkpoint_bytes(inp: EstimateInput) -> int | None:
    """What an adapter checkpoint weighs (16-bit trainable parameters); None for full training."""
    if inp.training.method == "full":
        return None
    trainable = trainable_parameters(inp.model, inp.training)
    return math.ceil(trainable * ADAPTER_CHECKPOINT_BYTES_PER_PARAMETER)
