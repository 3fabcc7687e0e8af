"""Validation of the estimate's input (POST /estimates/preview/), one function per input group.

Rule: every field is checked against its documented range (``checks.LIMITS``) and the choices
the formulas know; an error names the field in the API's dotted form ("hardware.count"), so the
view answers 400 naming it (docs/domain.md §10). Groups are checked in the body's order (model,
training, hardware, pilot, overheads, energy, cost); the first error wins.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from catalog.domain.catalog import GpuModel, get_gpu
from estimates.domain.formulas.adapters import trainable_parameters
from estimates.domain.formulas.checks import (
    EstimateInputError,
    check_choice,
    check_utilization,
    in_range,
    non_negative_money,
    positive,
    positive_int,
)
from estimates.domain.formulas.memory import data_parallel_degree
from estimates.domain.formulas.specs import (
    ARCHITECTURES,
    EXPERT_PLACEMENTS,
    FUSED_MODULES,
    LOSSES,
    METHODS,
    OFFLOADS,
    OPTIMIZERS,
    PRECISIONS,
    QUANTIZATIONS,
    TARGET_MODULES,
    UTILIZATION_KINDS,
    WEIGHT_PRECISIONS,
    CostSpec,
    EnergySpec,
    EstimateInput,
    HardwareSpec,
    ModelSpec,
    ModuleShape,
    PilotSpec,
    TrainingSpec,
)
from estimates.domain.formulas.time import Overheads, overhead_hours

_TARGETS = (
    f'give "all-linear", or a list of {" ".join((*TARGET_MODULES, *FUSED_MODULES))} (or their '
    "_proj names) and shapes {name, in_features, out_features, count}"
)
_OVERHEAD_FIELDS = (
    "loading_hours",
    "long_input_hours",
    "validation_fraction",
    "output_hours",
    "checkpoint_hours",
)


def resolve_gpu(gpu: GpuModel | str) -> GpuModel:
    if isinstance(gpu, GpuModel):
        return gpu
    try:
        return get_gpu(gpu)
    except (KeyError, AttributeError):
        raise EstimateInputError("hardware.gpu", f"unknown GPU model {gpu!r}") from None


def rename_field(error: EstimateInputError, prefix: str) -> EstimateInputError:
    return EstimateInputError(f"{prefix}.{error.field}", error.message)


@contextmanager
def within(prefix: str) -> Iterator[None]:
    """Re-raise an ``EstimateInputError`` with its field under ``prefix`` ("model.layers")."""
    try:
        yield
    except EstimateInputError as error:
        raise rename_field(error, prefix) from None


def validate(inp: EstimateInput) -> GpuModel:
    """Check every field with docs/api.md's dotted names; return the resolved GPU."""
    with within("model"):
        _check_model(inp.model)
    with within("training"):
        _check_training(inp.training)
    _check_method(inp)
    gpu = resolve_gpu(inp.hardware.gpu)
    with within("hardware"):
        _check_hardware(inp.hardware, inp.model)
    if not gpu.supports(inp.training.precision):
        raise EstimateInputError(
            "training.precision",
            f"the {gpu.name} has no {inp.training.precision} support; "
            f"it offers {', '.join(gpu.peak_flops)}",
        )
    if inp.pilot is not None:
        with within("pilot"):
            _check_pilot(inp.pilot)
    if inp.overheads is not None:
        with within("overheads"):
            _check_overheads(inp.overheads)
    if inp.energy is not None:
        with within("energy"):
            _check_energy(inp.energy)
    if inp.cost is not None:
        with within("cost"):
            _check_cost(inp.cost)
    return gpu


def _check_method(inp: EstimateInput) -> None:
    """What only makes sense together: a stored base with adapters, a pilot unit for samples."""
    model, training = inp.model, inp.training
    if training.method == "full" and model.weight_precision not in (None, training.precision):
        raise EstimateInputError(
            "model.weight_precision",
            "applies to lora and qlora; full training keeps the weights in training.precision",
        )
    if training.method != "full":
        trainable_parameters(model, training)  # raises, naming the field, without a shape
    pilot = inp.pilot
    if (
        training.flops_per_sample is not None
        and training.tokens_per_sample is None
        and pilot is not None
        and pilot.tokens_per_second is not None
    ):
        raise EstimateInputError(
            "pilot.tokens_per_second",
            "a run given by flops_per_sample counts samples: give pilot.samples_per_second",
        )


def _check_model(model: ModelSpec) -> None:
    in_range(positive(model.parameters, "parameters"), "model.parameters")
    for name in ("layers", "hidden_size", "attention_heads", "vocab_size"):
        value = getattr(model, name)
        if value is not None:
            in_range(positive_int(value, name), f"model.{name}")
    if model.largest_layer_parameters is not None:
        in_range(model.largest_layer_parameters, "model.largest_layer_parameters")
    for name in (
        "intermediate_size",
        "key_value_heads",
        "experts",
        "experts_per_token",
        "attention_width",
    ):
        value = getattr(model, name)
        if value is not None:
            in_range(positive_int(value, name), f"model.{name}")
    _check_experts(model)
    _check_storage(model)
    check_choice(model.architecture, ARCHITECTURES, "architecture")
    heads, width = model.attention_heads, model.attention_width
    if heads is not None and width is not None and width % heads:
        raise EstimateInputError(
            "attention_width", f"must be the {heads} heads x their head size (a multiple of it)"
        )


def _check_storage(model: ModelSpec) -> None:
    """How the base is stored; a GPTQ/AWQ layout only for int4 weights (§24.2)."""
    if model.weight_precision is not None:
        check_choice(model.weight_precision, WEIGHT_PRECISIONS, "weight_precision")
    if model.quantization is not None:
        check_choice(model.quantization, QUANTIZATIONS, "quantization")
        if model.weight_precision != "int4":
            raise EstimateInputError("quantization", "applies to weight_precision int4")
    if not isinstance(model.double_quant, bool):
        raise EstimateInputError(
            "double_quant", f"must be true or false, got {model.double_quant!r}"
        )


def _check_experts(model: ModelSpec) -> None:
    """Active parameters are a part of all of them; key/value heads divide the query heads."""
    if model.active_parameters is not None:
        in_range(positive(model.active_parameters, "active_parameters"), "model.active_parameters")
        if model.active_parameters > model.parameters:
            raise EstimateInputError(
                "active_parameters",
                f"cannot exceed model.parameters ({model.parameters:g}): give the total there",
            )
    heads, kv = model.attention_heads, model.key_value_heads
    if heads is not None and kv is not None and (kv > heads or heads % kv):
        raise EstimateInputError(
            "key_value_heads", f"must divide the model's {heads} attention heads"
        )
    routed, experts = model.experts_per_token, model.experts
    if routed is not None and (experts is None or routed > experts):
        raise EstimateInputError("experts_per_token", "needs model.experts, at least as many")


def _check_adapter(training: TrainingSpec) -> None:
    if training.trainable_parameters is not None:
        in_range(
            positive(training.trainable_parameters, "trainable_parameters"),
            "training.trainable_parameters",
        )
    lora = training.lora
    if lora is None:
        return
    if training.method == "full":
        raise EstimateInputError("lora", "applies to method lora or qlora")
    in_range(positive_int(lora.rank, "rank"), "training.lora.rank")
    targets = lora.target_modules
    if targets == "all-linear":
        return
    if isinstance(targets, str) or not targets:
        raise EstimateInputError("lora.target_modules", _TARGETS)
    for target in targets:
        if isinstance(target, ModuleShape):
            for name in ("in_features", "out_features", "count"):
                in_range(positive_int(getattr(target, name), name), f"training.lora.module.{name}")
        elif target not in (*TARGET_MODULES, *FUSED_MODULES):
            raise EstimateInputError("lora.target_modules", _TARGETS)


def _check_work(training: TrainingSpec) -> None:
    """``tokens``, or ``samples`` with ``tokens_per_sample`` (or with ``flops_per_sample``)."""
    if training.flops_per_sample is not None:
        in_range(
            positive(training.flops_per_sample, "flops_per_sample"), "training.flops_per_sample"
        )
        if training.samples is None:
            raise EstimateInputError("samples", "required with flops_per_sample")
        if training.tokens is not None:
            raise EstimateInputError("tokens", "give samples with flops_per_sample, not tokens")
        in_range(positive(training.samples, "samples"), "training.samples")
        if training.tokens_per_sample is not None:
            in_range(
                positive(training.tokens_per_sample, "tokens_per_sample"),
                "training.tokens_per_sample",
            )
        return
    if training.tokens is not None:
        if training.samples is not None or training.tokens_per_sample is not None:
            raise EstimateInputError("tokens", "give tokens or samples + tokens_per_sample")
        in_range(positive(training.tokens, "tokens"), "training.tokens")
        return
    if training.samples is None:
        raise EstimateInputError("tokens", "give tokens or samples + tokens_per_sample")
    in_range(positive(training.samples, "samples"), "training.samples")
    if training.tokens_per_sample is None:
        raise EstimateInputError("tokens_per_sample", "required with samples")
    in_range(
        positive(training.tokens_per_sample, "tokens_per_sample"), "training.tokens_per_sample"
    )


def _check_training(training: TrainingSpec) -> None:
    check_choice(training.method, METHODS, "method")
    _check_work(training)
    _check_adapter(training)
    in_range(positive(training.epochs, "epochs"), "training.epochs")
    for name in ("sequence_length", "micro_batch_size", "gradient_accumulation_steps"):
        in_range(positive_int(getattr(training, name), name), f"training.{name}")
    if training.activation_bytes_per_sample is not None:
        in_range(
            positive(training.activation_bytes_per_sample, "activation_bytes_per_sample"),
            "training.activation_bytes_per_sample",
        )
    check_choice(training.precision, PRECISIONS, "precision")
    check_choice(training.optimizer, OPTIMIZERS, "optimizer")
    if training.loss is not None:
        check_choice(training.loss, LOSSES, "loss")


def _check_hardware(hardware: HardwareSpec, model: ModelSpec) -> None:
    in_range(positive_int(hardware.count, "count"), "hardware.count")
    in_range(check_utilization(hardware.utilization), "hardware.utilization")
    if isinstance(hardware.zero_stage, bool) or hardware.zero_stage not in (0, 1, 2, 3):
        raise EstimateInputError("zero_stage", f"must be 0, 1, 2 or 3; got {hardware.zero_stage!r}")
    for name in ("tensor_parallel", "pipeline_parallel"):
        in_range(positive_int(getattr(hardware, name), name), f"hardware.{name}")
    if hardware.gpus_per_node is not None:
        in_range(positive_int(hardware.gpus_per_node, "gpus_per_node"), "hardware.gpus_per_node")
    check_choice(hardware.utilization_kind, UTILIZATION_KINDS, "utilization_kind")
    check_choice(hardware.expert_parallel_placement, EXPERT_PLACEMENTS, "expert_parallel_placement")
    _check_offload(hardware)
    _check_parallelism(hardware, model)
    _check_expert_and_context(hardware, model)


def _check_offload(hardware: HardwareSpec) -> None:
    check_choice(hardware.offload, OFFLOADS, "offload")
    if hardware.offload == "optimizer" and hardware.zero_stage < 1:
        raise EstimateInputError(
            "offload", "offloading the optimizer needs ZeRO stage 1 or more (ZeRO-Offload)"
        )
    if hardware.offload == "optimizer_and_parameters" and hardware.zero_stage != 3:
        raise EstimateInputError("offload", "offloading parameters needs ZeRO stage 3")


def _check_parallelism(hardware: HardwareSpec, model: ModelSpec) -> None:
    """The GPU count splits into t x p x d, and the model into t and p (Narayanan 2021)."""
    try:
        data_parallel_degree(hardware.count, hardware.tensor_parallel, hardware.pipeline_parallel)
    except EstimateInputError as error:
        raise EstimateInputError("count", error.message) from None
    if model.layers is not None and hardware.pipeline_parallel > model.layers:
        raise EstimateInputError(
            "pipeline_parallel", f"more pipeline stages than the model's {model.layers} layers"
        )
    heads = model.attention_heads
    if heads is not None and heads % hardware.tensor_parallel:
        raise EstimateInputError(
            "tensor_parallel", f"must divide the model's {heads} attention heads"
        )


def _check_expert_and_context(hardware: HardwareSpec, model: ModelSpec) -> None:
    """Experts split over expert_parallel ranks, the sequence over context_parallel ranks, both
    inside the data-parallel GPUs (Megatron's layout)."""
    ep, cp = hardware.expert_parallel, hardware.context_parallel
    in_range(positive_int(ep, "expert_parallel"), "hardware.expert_parallel")
    in_range(positive_int(cp, "context_parallel"), "hardware.context_parallel")
    replicas = hardware.count // (hardware.tensor_parallel * hardware.pipeline_parallel)
    if replicas % ep:
        raise EstimateInputError(
            "expert_parallel", f"must divide the {replicas} data-parallel GPUs"
        )
    if replicas % cp:
        raise EstimateInputError(
            "context_parallel", f"must divide the {replicas} data-parallel GPUs"
        )
    if ep > 1 and (model.experts is None or model.experts % ep):
        raise EstimateInputError(
            "expert_parallel", "needs model.experts, a multiple of expert_parallel"
        )


def _check_pilot(pilot: PilotSpec) -> None:
    given = [v for v in (pilot.tokens_per_second, pilot.samples_per_second) if v is not None]
    if len(given) != 1:
        raise EstimateInputError(
            "tokens_per_second", "give exactly one of tokens_per_second, samples_per_second"
        )
    if pilot.tokens_per_second is not None:
        in_range(positive(pilot.tokens_per_second, "tokens_per_second"), "pilot.tokens_per_second")
    if pilot.samples_per_second is not None:
        in_range(
            positive(pilot.samples_per_second, "samples_per_second"), "pilot.samples_per_second"
        )
    if pilot.gpus is not None:
        in_range(positive_int(pilot.gpus, "gpus"), "pilot.gpus")
    if pilot.sequence_length is not None:
        in_range(positive_int(pilot.sequence_length, "sequence_length"), "pilot.sequence_length")
    if pilot.micro_batch_size is not None:
        in_range(positive_int(pilot.micro_batch_size, "micro_batch_size"), "pilot.micro_batch_size")


def _check_overheads(overheads: Overheads) -> None:
    overhead_hours(0.0, overheads)
    for name in _OVERHEAD_FIELDS:
        in_range(getattr(overheads, name), f"overheads.{name}")


def _check_energy(energy: EnergySpec) -> None:
    in_range(energy.pue, "energy.pue")
    in_range(energy.grid_kg_co2_per_kwh, "energy.grid_kg_co2_per_kwh")
    if energy.tdp_watts is not None:
        in_range(energy.tdp_watts, "energy.tdp_watts")


def _check_cost(cost: CostSpec) -> None:
    non_negative_money(cost.hourly_rate_per_gpu, "hourly_rate_per_gpu")
    non_negative_money(cost.extra, "extra")
    currency = cost.currency
    if not (isinstance(currency, str) and len(currency) == 3 and currency.isalpha()):
        raise EstimateInputError("currency", f"must be a 3-letter code, got {currency!r}")
