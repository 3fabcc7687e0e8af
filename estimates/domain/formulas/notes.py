"""The words that say what a fine-tuning, expert, long-context or non-transformer estimate
assumed (docs/domain.md §24), and what the interconnect does to it.

Units: as the estimate's; GiB are 2**30 bytes, GB/s are 10**9 bytes per second.
"""

from __future__ import annotations

import math

from estimates.domain.formulas.activations import logits_bytes, loss_kind
from estimates.domain.formulas.adapters import (
    bits_per_weight,
    lora_targets,
    storage_precision,
    target_names,
    trainable_parameters,
)
from estimates.domain.formulas.communication import Communication
from estimates.domain.formulas.specs import EstimateInput, LoraSpec
from estimates.domain.formulas.wording import count_text, gib
from estimates.domain.formulas.work import active_parameters, sequence_rescale

# Beyond this ratio of sequence lengths a rescaled pilot is called an extrapolation.
_FAR: float = 4.0


def method_notes(inp: EstimateInput) -> list[str]:
    """What the method, the experts, the loss and a non-transformer run assumed."""
    notes = _adapter_notes(inp)
    model, training = inp.model, inp.training
    if model.active_parameters is not None:
        notes.append(
            f"Mixture-of-experts: FLOPs from the {count_text(model.active_parameters)} active "
            f"parameters, memory from all {count_text(model.parameters)}; the inactive experts "
            f"are divided over expert_parallel = {inp.hardware.expert_parallel} ranks, the active "
            "ones counted on each (an upper bound)."
        )
    if training.flops_per_sample is not None:
        notes.append(
            f"FLOPs from {training.flops_per_sample:.3g} forward FLOPs per sample x 3 (the "
            f"backward pass is twice the forward); {_activation_words(inp)}"
        )
    logits = logits_bytes(inp, training.micro_batch_size)
    if logits:
        words = {
            "standard": "the standard loss (16 bytes a logit; a fused or chunked loss cuts it)",
            "chunked": "a chunked loss (8 chunks, 5.25 bytes a logit)",
        }
        notes.append(
            f"The logits at vocabulary {model.vocab_size:,} take {gib(logits)}: "
            f"{words[loss_kind(inp)]}."
        )
    return notes


def _activation_words(inp: EstimateInput) -> str:
    given = inp.training.activation_bytes_per_sample
    if given is not None:
        return (
            f"activations {gib(math.ceil(given))} per sample as given, x micro-batch "
            f"{inp.training.micro_batch_size} (the figure must match the run's own "
            "checkpointing and precision)."
        )
    return (
        "activation memory is not counted: give training.activation_bytes_per_sample (or "
        "model.layers, model.hidden_size and model.attention_heads for a transformer)."
    )


def _adapter_notes(inp: EstimateInput) -> list[str]:
    model, training = inp.model, inp.training
    if training.method == "full":
        return []
    trainable = trainable_parameters(model, training)
    lora = training.lora or LoraSpec()
    given = training.trainable_parameters is not None
    what = (
        "as given"
        if given
        else f"LoRA rank {lora.rank} on {target_names(lora_targets(lora))} of each layer"
    )
    precision = storage_precision(model, training)
    bits = bits_per_weight(precision, model.double_quant)
    share = 100 * trainable / active_parameters(model)
    return [
        f"{training.method.upper()}: {count_text(trainable)} trainable parameters ({what}, "
        f"{share:.2f}% of the base); the base is frozen, stored in {precision} "
        f"({bits:.3g} bits per weight with its quantization constants), with gradients and "
        f"{training.optimizer} states for the adapter only. FLOPs per token: 4N + 6T "
        "(no weight gradients for the base) plus causal attention."
    ]


def sequence_notes(inp: EstimateInput) -> list[str]:
    """How far a pilot measured at another sequence length was carried, and how far to trust it."""
    pilot = inp.pilot
    if pilot is None or pilot.sequence_length is None:
        return []
    target = inp.training.sequence_length
    if pilot.sequence_length == target:
        return []
    factor = sequence_rescale(inp)
    if factor == 1.0:
        return [
            f"The pilot ran at {pilot.sequence_length:,} tokens, the training at {target:,}: not "
            "rescaled without model.layers and model.hidden_size."
        ]
    ratio = max(target, pilot.sequence_length) / min(target, pilot.sequence_length)
    trust = (
        "an extrapolation: attention's share changes, so measure a short pilot at the target "
        "length before committing"
        if ratio >= _FAR
        else "close enough for planning; a pilot at the target length is still better"
    )
    return [
        f"The pilot ran at {pilot.sequence_length:,} tokens per sequence, the training at "
        f"{target:,}: its throughput was rescaled x{factor:.3g} by the per-token work at each "
        f"({ratio:.3g}x the length is {trust})."
    ]


def communication_notes(inp: EstimateInput, comm: Communication | None) -> list[str]:
    """The step's collectives in words: what crosses which link, and what is not hidden."""
    if comm is None or inp.hardware.count <= 1:
        return []
    notes: list[str] = []
    if comm.uncounted:
        notes.append(
            f"Not counted ({', '.join(comm.uncounted)}): the catalog has no bandwidth for the "
            "link it needs on this GPU; time assumes it free."
        )
    if comm.collectives:
        worst = max(comm.collectives, key=lambda c: c.exposed_seconds_per_step)
        detail = "; ".join(
            f"{c.name} {c.bytes_per_step / 1e9:,.2f} GB over {c.link} ({c.algorithm}), "
            f"{c.seconds_per_step:,.3f} s, hidden by {c.hidden_by}"
            for c in comm.collectives
        )
        notes.append(
            f"Communication per step: {detail}. Not hidden: {comm.exposed_seconds_per_step:,.3f} "
            f"s of {comm.compute_seconds_per_step:,.3f} s of compute (most from {worst.name}); "
            f"scaling efficiency {100 * comm.scaling_efficiency:.0f}% over "
            f"{inp.hardware.count} GPUs."
        )
    if comm.pipeline_bubble > 0.1:
        notes.append(
            f"The pipeline idles {100 * comm.pipeline_bubble:.0f}% of each step ((p - 1) / (m + "
            "p - 1)): a utilization measured at this shape includes it; more micro-batches per "
            "step (gradient_accumulation_steps) shrink it."
        )
    return notes
