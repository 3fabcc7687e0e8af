"""A transformer's shape as the formulas read it: stacks, attention width, key/value width.

Rules (docs/domain.md §24.1, §24.5): ``model.layers`` is the depth of one stack; an
encoder-decoder has two stacks of it (T5: ``num_layers`` and ``num_decoder_layers``), and its
decoder layers add a cross-attention block. The attention's query/output width is
``attention_width`` when given (heads x head size, e.g. Gemma 7B: 16 x 256 = 4096 on a 3072-wide
model), else the hidden size; the key/value width is key_value_heads x head size.
Units: widths in features, counts in layers.
"""

from __future__ import annotations

from estimates.domain.formulas.specs import ModelSpec


def is_encoder_decoder(model: ModelSpec) -> bool:
    return model.architecture == "encoder_decoder"


def stack_layers(model: ModelSpec) -> int:
    """Transformer layers a full pass goes through (both stacks of an encoder-decoder)."""
    layers = model.layers or 0
    return 2 * layers if is_encoder_decoder(model) else layers


def attention_blocks(model: ModelSpec) -> int:
    """Attention blocks: one per layer, plus the decoder's cross-attention."""
    layers = model.layers or 0
    return 3 * layers if is_encoder_decoder(model) else layers


def attention_width(model: ModelSpec) -> int:
    """The query / output projection width: heads x head size."""
    return model.attention_width or model.hidden_size or 0


def head_size(model: ModelSpec) -> float:
    heads = model.attention_heads or 1
    return attention_width(model) / heads


def kv_width(model: ModelSpec) -> float:
    """Key (or value) width: key_value_heads x head size (grouped-query attention)."""
    heads = model.attention_heads or 1
    return (model.key_value_heads or heads) * head_size(model)


def mlp_width(model: ModelSpec) -> int:
    """The MLP's inner width: given, else GPT's 4 x hidden."""
    return model.intermediate_size or 4 * (model.hidden_size or 0)


def is_gated(model: ModelSpec) -> bool:
    """A gated MLP (SwiGLU: gate, up, down) when its width is given, as Llama-style configs
    state it; GPT's two-matrix MLP (4h) otherwise."""
    return model.intermediate_size is not None
