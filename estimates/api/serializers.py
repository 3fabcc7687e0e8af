"""Serializers of the estimates API: the stateless calculator's request and answer, the catalog,
and the campaign forecast.

The request serializers check shape and types only; the domain rules (positive counts,
utilization in (0, 1], ZeRO stage 0-3, parallelism that divides the GPUs…) live in
`estimates.domain.formulas`, whose `EstimateInputError.field` the view maps back onto this nesting.
"""

from __future__ import annotations

from datetime import date
from decimal import Decimal
from typing import Any

from drf_spectacular.extensions import OpenApiSerializerExtension
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from campaigns.api.fields import (
    MoneyField,
    StrictBooleanField,
    StrictCharField,
    StrictFloatField,
    StrictIntegerField,
    StrictModelSerializer,
    StrictRegexField,
)
from catalog.domain import catalog
from catalog.models import GpuModel, HourlyRate, RentalPlan
from estimates.domain import formulas
from estimates.domain import hardware_options as options

CURRENCY = r"^[A-Z]{3}$"


def limits(dotted: str, *, integer: bool = False) -> dict[str, Any]:
    """The documented range of an input (``formulas.LIMITS``) as DRF's min_value/max_value, so
    the schema states it as minimum/maximum and a value outside it is a 400 naming the field."""
    low, high = formulas.LIMITS[dotted]
    if integer:
        return {"min_value": int(low), "max_value": int(high)}
    return {"min_value": float(low), "max_value": float(high)}


class StrictSerializer(serializers.Serializer[Any]):
    """Refuses fields it does not declare, each named in the 400 ("Unknown field."): a misspelt
    optional field would otherwise be ignored silently and its default used instead."""

    def to_internal_value(self, data: Any) -> Any:
        if isinstance(data, dict):
            unknown = sorted(set(data) - set(self.fields))
            if unknown:
                raise serializers.ValidationError({name: ["Unknown field."] for name in unknown})
        return super().to_internal_value(data)


class StrictSerializerSchema(OpenApiSerializerExtension):  # type: ignore[no-untyped-call]
    """The schema says what StrictSerializer does: no property beyond those listed."""

    target_class = StrictSerializer
    match_subclasses = True

    def map_serializer(self, auto_schema: Any, direction: str) -> Any:
        schema = auto_schema._map_basic_serializer(self.target, direction)
        if direction == "request":
            schema["additionalProperties"] = False
        return schema


# --------------------------------------------------------------------------- preview request


class ModelSpecSerializer(StrictSerializer):
    parameters = StrictFloatField(
        help_text="Parameter count, e.g. 7e9.", **limits("model.parameters")
    )
    layers = StrictIntegerField(
        required=False, allow_null=True, **limits("model.layers", integer=True)
    )
    hidden_size = StrictIntegerField(
        required=False, allow_null=True, **limits("model.hidden_size", integer=True)
    )
    attention_heads = StrictIntegerField(
        required=False, allow_null=True, **limits("model.attention_heads", integer=True)
    )
    vocab_size = StrictIntegerField(
        required=False, allow_null=True, **limits("model.vocab_size", integer=True)
    )
    largest_layer_parameters = StrictFloatField(
        required=False,
        allow_null=True,
        help_text="Parameters of the largest layer (DeepSpeed ZeRO-3); default vocab x hidden.",
        **limits("model.largest_layer_parameters"),
    )
    intermediate_size = StrictIntegerField(
        required=False,
        allow_null=True,
        help_text="MLP width (gate/up/down) for the adapter count; default 4 x hidden_size.",
        **limits("model.intermediate_size", integer=True),
    )
    key_value_heads = StrictIntegerField(
        required=False,
        allow_null=True,
        help_text="Grouped-query attention's key/value heads; default attention_heads.",
        **limits("model.key_value_heads", integer=True),
    )
    weight_precision = serializers.ChoiceField(
        choices=formulas.WEIGHT_PRECISIONS,
        required=False,
        allow_null=True,
        help_text="How the base is stored (lora, qlora); default the training precision, nf4 "
        "for qlora.",
    )
    double_quant = StrictBooleanField(
        default=False, help_text="NF4/FP4 double quantization of the constants (QLoRA)."
    )
    active_parameters = StrictFloatField(
        required=False,
        allow_null=True,
        help_text="Mixture-of-experts: parameters one token passes through (default: all).",
        **limits("model.active_parameters"),
    )
    experts = StrictIntegerField(
        required=False,
        allow_null=True,
        help_text="Mixture-of-experts: experts per layer.",
        **limits("model.experts", integer=True),
    )


@extend_schema_field(
    {
        "oneOf": [
            {"type": "string", "enum": ["all-linear"]},
            {
                "type": "array",
                "items": {"type": "string", "enum": list(formulas.TARGET_MODULES)},
                "minItems": 1,
                "maxItems": len(formulas.TARGET_MODULES),
            },
        ]
    }
)
class TargetModulesField(serializers.Field[Any, Any, Any, Any]):
    """``"all-linear"`` or a list of ``q k v o gate up down``."""

    default_error_messages = {
        "invalid": 'Give "all-linear" or a list of q, k, v, o, gate, up, down.',
    }

    def to_internal_value(self, data: Any) -> str | tuple[str, ...]:
        if data == "all-linear":
            return "all-linear"
        if (
            isinstance(data, list)
            and data
            and all(isinstance(t, str) and t in formulas.TARGET_MODULES for t in data)
        ):
            return tuple(dict.fromkeys(data))
        self.fail("invalid")
        raise AssertionError  # fail() raises

    def to_representation(self, value: Any) -> Any:
        return value if isinstance(value, str) else list(value)


class LoraSerializer(StrictSerializer):
    rank = StrictIntegerField(default=16, **limits("training.lora.rank", integer=True))
    target_modules = TargetModulesField(default="all-linear")


class TrainingSpecSerializer(StrictSerializer):
    tokens = StrictFloatField(
        required=False,
        allow_null=True,
        help_text="Tokens per epoch; or samples + tokens_per_sample.",
        **limits("training.tokens"),
    )
    samples = StrictFloatField(required=False, allow_null=True, **limits("training.samples"))
    tokens_per_sample = StrictFloatField(
        required=False, allow_null=True, **limits("training.tokens_per_sample")
    )
    epochs = StrictFloatField(default=1.0, **limits("training.epochs"))
    sequence_length = StrictIntegerField(
        default=2048, **limits("training.sequence_length", integer=True)
    )
    micro_batch_size = StrictIntegerField(
        default=1, **limits("training.micro_batch_size", integer=True)
    )
    precision = serializers.ChoiceField(choices=formulas.PRECISIONS, default="bf16")
    optimizer = serializers.ChoiceField(choices=formulas.OPTIMIZERS, default="adamw")
    activation_checkpointing = StrictBooleanField(default=False)
    flash_attention = StrictBooleanField(default=False)
    method = serializers.ChoiceField(
        choices=formulas.METHODS,
        default="full",
        help_text="full (default), lora or qlora (docs/domain.md §24.1).",
    )
    lora = LoraSerializer(required=False, allow_null=True, help_text="Rank and target modules.")
    trainable_parameters = StrictFloatField(
        required=False,
        allow_null=True,
        help_text="The trainable count given directly (overrides the one from the shape).",
        **limits("training.trainable_parameters"),
    )
    flops_per_sample = StrictFloatField(
        required=False,
        allow_null=True,
        help_text="Forward FLOPs of one sample, for models that are not transformers (with "
        "samples).",
        **limits("training.flops_per_sample"),
    )
    chunked_loss = StrictBooleanField(
        required=False,
        allow_null=True,
        help_text="Logits memory: chunked (true) or full (false) loss; default full, counted "
        "for lora/qlora only.",
    )


class PeakFlopsSerializer(StrictSerializer):
    fp32 = StrictFloatField(required=False, **limits("hardware.custom.peak_flops"))
    tf32 = StrictFloatField(required=False, **limits("hardware.custom.peak_flops"))
    bf16 = StrictFloatField(required=False, **limits("hardware.custom.peak_flops"))
    fp16 = StrictFloatField(required=False, **limits("hardware.custom.peak_flops"))
    fp8 = StrictFloatField(required=False, **limits("hardware.custom.peak_flops"))

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if not attrs:
            raise serializers.ValidationError("Give the dense peak FLOP/s of one precision.")
        return attrs


class CustomHardwareSerializer(StrictSerializer):
    name = StrictCharField(max_length=60)
    memory_bytes = StrictIntegerField(**limits("hardware.custom.memory_bytes", integer=True))
    peak_flops = PeakFlopsSerializer(help_text="Precision -> dense FLOP/s of one device.")
    tdp_watts = StrictFloatField(
        required=False, allow_null=True, **limits("hardware.custom.tdp_watts")
    )

    def as_spec(self, data: dict[str, Any]) -> catalog.GpuModel:
        return catalog.GpuModel(
            name=data["name"],
            memory_bytes=data["memory_bytes"],
            peak_flops=dict(data["peak_flops"]),
            source="given by the caller",
            tdp_watts=data.get("tdp_watts"),
        )


class HardwareSpecSerializer(StrictSerializer):
    gpu = StrictCharField(
        max_length=60,
        required=False,
        help_text="A name (or alias, e.g. H100-80GB) from GET /estimates/hardware/; or custom.",
    )
    custom = CustomHardwareSerializer(
        required=False, help_text="An accelerator not in the catalog, in place of gpu."
    )
    count = StrictIntegerField(default=1, **limits("hardware.count", integer=True))
    utilization = StrictFloatField(
        default=0.4, help_text="Fraction of peak FLOP/s.", **limits("hardware.utilization")
    )
    zero_stage = StrictIntegerField(default=0, min_value=0, max_value=3)
    tensor_parallel = StrictIntegerField(
        default=1, **limits("hardware.tensor_parallel", integer=True)
    )
    pipeline_parallel = StrictIntegerField(
        default=1, **limits("hardware.pipeline_parallel", integer=True)
    )
    utilization_kind = serializers.ChoiceField(
        choices=formulas.UTILIZATION_KINDS,
        default="hfu",
        help_text="hfu: FLOPs executed incl. recomputation; mfu: model FLOPs (PaLM appendix B).",
    )
    offload = serializers.ChoiceField(choices=formulas.OFFLOADS, default="none")
    gpus_per_node = StrictIntegerField(
        required=False,
        allow_null=True,
        help_text="For DeepSpeed's CPU memory per node (default min(count, 8)).",
        **limits("hardware.gpus_per_node", integer=True),
    )
    expert_parallel = StrictIntegerField(
        default=1,
        help_text="Ranks the experts are divided over (needs model.experts).",
        **limits("hardware.expert_parallel", integer=True),
    )
    context_parallel = StrictIntegerField(
        default=1,
        help_text="Ranks the sequence is divided over (ring attention).",
        **limits("hardware.context_parallel", integer=True),
    )

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if ("gpu" in attrs) == ("custom" in attrs):
            raise serializers.ValidationError({"gpu": ["Give exactly one of gpu or custom."]})
        return attrs


class PilotSpecSerializer(StrictSerializer):
    tokens_per_second = StrictFloatField(
        required=False, allow_null=True, **limits("pilot.tokens_per_second")
    )
    samples_per_second = StrictFloatField(
        required=False, allow_null=True, **limits("pilot.samples_per_second")
    )
    gpus = StrictIntegerField(
        required=False,
        allow_null=True,
        help_text="GPUs the pilot ran on (default: hardware.count).",
        **limits("pilot.gpus", integer=True),
    )
    sequence_length = StrictIntegerField(
        required=False,
        allow_null=True,
        help_text="The sequence length the pilot ran at (default: the training's).",
        **limits("pilot.sequence_length", integer=True),
    )


class OverheadsSerializer(StrictSerializer):
    loading_hours = StrictFloatField(default=0.0, **limits("overheads.loading_hours"))
    long_input_hours = StrictFloatField(default=0.0, **limits("overheads.long_input_hours"))
    validation_fraction = StrictFloatField(default=0.0, **limits("overheads.validation_fraction"))
    output_hours = StrictFloatField(default=0.0, **limits("overheads.output_hours"))
    checkpoint_hours = StrictFloatField(default=0.0, **limits("overheads.checkpoint_hours"))


class CostSpecSerializer(StrictSerializer):
    hourly_rate_per_gpu = MoneyField(
        max_digits=14, decimal_places=4, min_value=Decimal("0"), help_text='e.g. "1.50"'
    )
    currency = StrictRegexField(CURRENCY, default="USD")
    extra = MoneyField(
        max_digits=14,
        decimal_places=2,
        min_value=Decimal("0"),
        default=Decimal("0.00"),
        help_text="Stated extra costs (storage, network); nothing is invented.",
    )


class EnergySpecSerializer(StrictSerializer):
    pue = StrictFloatField(
        help_text="Facility power over IT power (e.g. 1.1).", **limits("energy.pue")
    )
    grid_kg_co2_per_kwh = StrictFloatField(**limits("energy.grid_kg_co2_per_kwh"))
    tdp_watts = StrictFloatField(
        required=False,
        allow_null=True,
        help_text="Board power per GPU; default the catalog's.",
        **limits("energy.tdp_watts"),
    )


class InterruptionsSerializer(StrictSerializer):
    count = StrictIntegerField(**limits("reliability.interruptions.count", integer=True))
    days = StrictFloatField(**limits("reliability.interruptions.days"))


class ReliabilitySpecSerializer(StrictSerializer):
    checkpoint_write_seconds = StrictFloatField(**limits("reliability.checkpoint_write_seconds"))
    mtbf_hours = StrictFloatField(
        required=False,
        allow_null=True,
        help_text="The job's mean time between failures.",
        **limits("reliability.mtbf_hours"),
    )
    interruptions = InterruptionsSerializer(
        required=False, allow_null=True, help_text="Interruptions observed: count over days."
    )

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        given = [name for name in ("mtbf_hours", "interruptions") if attrs.get(name) is not None]
        if len(given) != 1:
            raise serializers.ValidationError(
                {"mtbf_hours": ["Give exactly one of mtbf_hours or interruptions."]}
            )
        return attrs


class EstimatePreviewSerializer(StrictSerializer):
    model = ModelSpecSerializer()
    training = TrainingSpecSerializer()
    hardware = HardwareSpecSerializer()
    pilot = PilotSpecSerializer(required=False, allow_null=True)
    overheads = OverheadsSerializer(required=False, allow_null=True)
    cost = CostSpecSerializer(required=False, allow_null=True)
    energy = EnergySpecSerializer(required=False, allow_null=True)
    reliability = ReliabilitySpecSerializer(required=False, allow_null=True)

    def to_estimate_input(self, gpu: catalog.GpuModel) -> formulas.EstimateInput:
        """The formulas' input; `gpu` is the catalog row the view looked up, or the custom one."""
        return estimate_input(self.validated_data, gpu)


class EstimateSpecSerializer(StrictSerializer):
    """A planned item's ``estimate_spec``: the preview's model, training and hardware."""

    model = ModelSpecSerializer()
    training = TrainingSpecSerializer()
    hardware = HardwareSpecSerializer(required=False)


def check_estimate_spec(value: dict[str, Any]) -> dict[str, Any]:
    """The item's spec checked by the preview serializers (campaigns.api.estimate_spec); kept
    as the planner wrote it, the defaults filled in where the forecast reads it."""
    body = EstimateSpecSerializer(data=value)
    if not body.is_valid():
        raise serializers.ValidationError(body.errors)
    return value


def estimate_input(data: dict[str, Any], gpu: catalog.GpuModel) -> formulas.EstimateInput:
    """The formulas' input from validated preview data (also hardware-options' per GPU)."""
    pilot, overheads, cost = data.get("pilot"), data.get("overheads"), data.get("cost")
    energy, reliability = data.get("energy"), data.get("reliability")
    hardware = {k: v for k, v in data["hardware"].items() if k != "custom"}
    pilot_fields = {k: v for k, v in (pilot or {}).items() if k != "gpu"}
    interruptions = (reliability or {}).get("interruptions") or {}
    training = dict(data["training"])
    lora = training.pop("lora", None)
    training["lora"] = None if lora is None else formulas.LoraSpec(**lora)
    return formulas.EstimateInput(
        model=formulas.ModelSpec(**data["model"]),
        training=formulas.TrainingSpec(**training),
        hardware=formulas.HardwareSpec(**{**hardware, "gpu": gpu}),
        pilot=formulas.PilotSpec(**pilot_fields) if pilot else None,
        overheads=formulas.Overheads(**overheads) if overheads else None,
        cost=formulas.CostSpec(**cost) if cost else None,
        energy=formulas.EnergySpec(**energy) if energy else None,
        reliability=formulas.ReliabilitySpec(
            checkpoint_write_seconds=reliability["checkpoint_write_seconds"],
            mtbf_hours=reliability.get("mtbf_hours"),
            interruptions_count=interruptions.get("count"),
            interruptions_days=interruptions.get("days"),
        )
        if reliability
        else None,
    )


# --------------------------------------------------------------------------- preview answer
# Documentation of the answer (OpenAPI); the view builds the dict itself.


class MemorySerializer(serializers.Serializer[Any]):
    weights = StrictIntegerField()
    gradients = StrictIntegerField()
    optimizer = StrictIntegerField()
    activations = StrictIntegerField()
    total = StrictIntegerField()


class MoneySerializer(serializers.Serializer[Any]):
    amount = StrictCharField(help_text='Decimal string, e.g. "47.14".')
    currency = StrictCharField()


class LeverSerializer(serializers.Serializer[Any]):
    name = StrictCharField()
    description = StrictCharField()
    training_flops = StrictFloatField()
    wall_hours = StrictFloatField()
    gpu_hours = StrictFloatField()
    cost = MoneySerializer(allow_null=True)
    loss_ratio = StrictFloatField(allow_null=True)


class GpuSummarySerializer(serializers.Serializer[Any]):
    name = StrictCharField()
    memory_bytes = StrictIntegerField()
    peak_flops = StrictFloatField(help_text="Dense FLOP/s at the requested precision.")
    tdp_watts = StrictFloatField(allow_null=True)

    def get_fields(self) -> dict[str, serializers.Field[Any, Any, Any, Any]]:
        fields = super().get_fields()
        # "source" is a Field attribute, so it cannot be declared in the class body.
        fields["source"] = StrictCharField(help_text="Where the figures come from.")
        return fields


class DeepSpeedSerializer(serializers.Serializer[Any]):
    per_gpu_bytes = StrictIntegerField()
    cpu_bytes = StrictIntegerField(help_text="Per node (CPU RAM), as DeepSpeed prints it.")
    version = StrictCharField()


class EnergySerializer(serializers.Serializer[Any]):
    gpu_kwh = StrictFloatField()
    facility_kwh = StrictFloatField()
    kg_co2e = StrictFloatField()


class CheckpointingSerializer(serializers.Serializer[Any]):
    young_interval_minutes = StrictFloatField()
    daly_interval_minutes = StrictFloatField()
    expected_lost_hours = StrictFloatField()
    wall_hours_with_failures = StrictFloatField()


class CheckpointSizeSerializer(serializers.Serializer[Any]):
    weights = StrictIntegerField()
    training_state = StrictIntegerField()
    adapter = StrictIntegerField(
        required=False, help_text="An adapter checkpoint (16-bit); lora and qlora only."
    )


class CommunicationSerializer(serializers.Serializer[Any]):
    bytes_per_step = StrictFloatField(help_text="Bytes each GPU sends per step.")
    seconds_per_step = StrictFloatField()
    exposed_seconds_per_step = StrictFloatField(help_text="Not hidden behind the backward pass.")
    compute_seconds_per_step = StrictFloatField()
    steps = StrictFloatField()
    bandwidth_bytes_per_second = StrictFloatField(allow_null=True)
    link = StrictCharField(help_text='"card-to-card" or "node-to-node".')
    scaling_efficiency = StrictFloatField(help_text="compute / (compute + exposed).")


class EstimateResultSerializer(serializers.Serializer[Any]):
    training_flops = StrictFloatField(help_text="6 N T (Kaplan 2020).")
    pf_days = StrictFloatField(help_text="training_flops in petaflop/s-days.")
    model_flops = StrictFloatField(help_text="(6N + 12 L h s) T, PaLM appendix B.")
    executed_flops = StrictFloatField(help_text="model_flops x 4/3 with recomputation.")
    mfu = StrictFloatField(help_text="Model FLOPs utilization (measured with a pilot).")
    hfu = StrictFloatField(help_text="Hardware FLOPs utilization (incl. recomputation).")
    deepspeed = DeepSpeedSerializer(allow_null=True, help_text="ZeRO stages 2 and 3 only.")
    cpu_memory_bytes = StrictIntegerField(allow_null=True)
    energy = EnergySerializer(allow_null=True)
    checkpointing = CheckpointingSerializer(allow_null=True)
    checkpoint_size_bytes = CheckpointSizeSerializer()
    trainable_parameters = StrictFloatField(help_text="All for full training; the adapter's.")
    communication = CommunicationSerializer(allow_null=True)
    narayanan_flops = StrictFloatField(allow_null=True)
    tokens = StrictFloatField()
    gpu_hours = StrictFloatField()
    wall_hours = StrictFloatField()
    training_wall_hours = StrictFloatField()
    overhead_hours = StrictFloatField()
    memory_per_device_bytes = MemorySerializer()
    device_memory_bytes = StrictIntegerField()
    fits_in_memory = StrictBooleanField()
    activations_counted = StrictBooleanField()
    cost = MoneySerializer(allow_null=True)
    time_source = StrictCharField(help_text='"pilot" or "assumed".')
    pilot_utilization = StrictFloatField(allow_null=True)
    data_parallel = StrictIntegerField()
    gpu = GpuSummarySerializer()
    levers = LeverSerializer(many=True)
    recommendations = serializers.ListField(child=StrictCharField())


def _money(money: formulas.Money | None) -> dict[str, str] | None:
    if money is None:
        return None
    return {"amount": str(money.amount), "currency": money.currency}


def _communication(comm: formulas.Communication | None) -> dict[str, Any] | None:
    if comm is None:
        return None
    return {
        "bytes_per_step": comm.bytes_per_step,
        "seconds_per_step": comm.seconds_per_step,
        "exposed_seconds_per_step": comm.exposed_seconds_per_step,
        "compute_seconds_per_step": comm.compute_seconds_per_step,
        "steps": comm.steps,
        "bandwidth_bytes_per_second": comm.bandwidth_bytes_per_second,
        "link": comm.link,
        "scaling_efficiency": comm.scaling_efficiency,
    }


def _sections_json(result: formulas.EstimateResult) -> dict[str, Any]:
    """DeepSpeed's estimate, energy and checkpointing: null when not asked for."""
    deepspeed, energy, failures = result.deepspeed, result.energy, result.checkpointing
    return {
        "deepspeed": None
        if deepspeed is None
        else {
            "per_gpu_bytes": deepspeed.per_gpu_bytes,
            "cpu_bytes": deepspeed.cpu_bytes,
            "version": deepspeed.version,
        },
        "cpu_memory_bytes": result.cpu_memory_bytes,
        "energy": None
        if energy is None
        else {
            "gpu_kwh": energy.gpu_kwh,
            "facility_kwh": energy.facility_kwh,
            "kg_co2e": energy.kg_co2e,
        },
        "checkpointing": None
        if failures is None
        else {
            "young_interval_minutes": failures.young_interval_minutes,
            "daly_interval_minutes": failures.daly_interval_minutes,
            "expected_lost_hours": failures.expected_lost_hours,
            "wall_hours_with_failures": failures.wall_hours_with_failures,
        },
    }


def result_json(
    result: formulas.EstimateResult, gpu: catalog.GpuModel, precision: str
) -> dict[str, Any]:
    memory = result.memory
    return {
        "training_flops": result.training_flops,
        "pf_days": result.pf_days,
        "model_flops": result.model_flops,
        "executed_flops": result.executed_flops,
        "mfu": result.mfu,
        "hfu": result.hfu,
        **_sections_json(result),
        # "adapter" only for lora/qlora: a full run's answer keeps its two keys.
        "checkpoint_size_bytes": {
            "weights": result.checkpoint_weights_bytes,
            "training_state": result.checkpoint_training_state_bytes,
        }
        | (
            {}
            if result.checkpoint_adapter_bytes is None
            else {"adapter": result.checkpoint_adapter_bytes}
        ),
        "trainable_parameters": result.trainable_parameters,
        "communication": _communication(result.communication),
        "narayanan_flops": result.narayanan_flops,
        "tokens": result.tokens,
        "gpu_hours": result.gpu_hours,
        "wall_hours": result.wall_hours,
        "training_wall_hours": result.training_wall_hours,
        "overhead_hours": result.overhead_hours,
        "memory_per_device_bytes": {
            "weights": memory.weights,
            "gradients": memory.gradients,
            "optimizer": memory.optimizer,
            "activations": memory.activations,
            "total": memory.total,
        },
        "device_memory_bytes": result.device_memory_bytes,
        "fits_in_memory": result.fits_in_memory,
        "activations_counted": result.activations_counted,
        "cost": _money(result.cost),
        "time_source": result.time_source,
        "pilot_utilization": result.pilot_utilization,
        "data_parallel": result.data_parallel,
        "gpu": {
            "name": gpu.name,
            "memory_bytes": gpu.memory_bytes,
            "peak_flops": float(gpu.peak_flops[precision]),
            "tdp_watts": gpu.tdp_watts,
            "source": gpu.source,
        },
        "levers": [
            {
                "name": lever.name,
                "description": lever.description,
                "training_flops": lever.training_flops,
                "wall_hours": lever.wall_hours,
                "gpu_hours": lever.gpu_hours,
                "cost": _money(lever.cost),
                "loss_ratio": lever.loss_ratio,
            }
            for lever in result.levers
        ],
        "recommendations": list(result.recommendations),
    }


# --------------------------------------------------------------------------- compute-optimal


class BudgetSerializer(StrictSerializer):
    amount = MoneyField(max_digits=16, decimal_places=2, min_value=Decimal("0.01"))
    currency = StrictRegexField(CURRENCY, default="USD")
    gpu = StrictCharField(max_length=60, help_text="A name or alias from the catalog.")
    precision = serializers.ChoiceField(choices=formulas.PRECISIONS, default="bf16")
    utilization = StrictFloatField(
        default=0.4, help_text="Fraction of peak (MFU).", **limits("budget.utilization")
    )
    hourly_rate_per_gpu = MoneyField(
        max_digits=14, decimal_places=4, min_value=Decimal("0.0001"), help_text='e.g. "2.00"'
    )


class ComputeOptimalRequestSerializer(StrictSerializer):
    flops = StrictFloatField(
        required=False, help_text="Training compute C.", **limits("compute_optimal.flops")
    )
    parameters = StrictFloatField(
        required=False, help_text="Model size N.", **limits("compute_optimal.parameters")
    )
    budget = BudgetSerializer(required=False, help_text="Money, turned into FLOPs on a GPU.")
    epochs = StrictFloatField(
        default=1.0,
        help_text="Passes over the data (offers the half-epochs lever from 2).",
        **limits("compute_optimal.epochs"),
    )

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        given = [name for name in ("flops", "parameters", "budget") if name in attrs]
        if len(given) != 1:
            raise serializers.ValidationError(
                {"flops": ["Give exactly one of flops, parameters or budget."]}
            )
        return attrs


class ScalingLeverSerializer(serializers.Serializer[Any]):
    name = StrictCharField()
    description = StrictCharField()
    flops = StrictFloatField()
    cost_ratio = StrictFloatField()
    cost = MoneySerializer(allow_null=True)
    loss_ratio = StrictFloatField(allow_null=True)
    projection = StrictCharField()


class BudgetAnswerSerializer(serializers.Serializer[Any]):
    gpu = StrictCharField()
    precision = StrictCharField()
    gpu_hours = StrictFloatField()
    cost = MoneySerializer()


class ComputeOptimalSerializer(serializers.Serializer[Any]):
    parameters = StrictFloatField()
    tokens = StrictFloatField()
    flops = StrictFloatField()
    tokens_per_parameter = StrictFloatField()
    pf_days = StrictFloatField()
    budget = BudgetAnswerSerializer(allow_null=True)
    levers = ScalingLeverSerializer(many=True)

    def get_fields(self) -> dict[str, serializers.Field[Any, Any, Any, Any]]:
        fields = super().get_fields()
        # "source" is a Field attribute, so it cannot be declared in the class body.
        fields["source"] = StrictCharField(help_text="The published fit and law used.")
        return fields


# --------------------------------------------------------------------------- serving


class LocalHardwareSerializer(StrictSerializer):
    purchase_price = MoneyField(max_digits=14, decimal_places=2, min_value=Decimal("0"))
    power_watts = StrictFloatField(
        help_text="Power drawn while serving.", **limits("local.power_watts")
    )
    electricity_per_kwh = MoneyField(max_digits=10, decimal_places=4, min_value=Decimal("0"))
    lifetime_months = StrictIntegerField(**limits("local.lifetime_months", integer=True))


class ServingModelSerializer(StrictSerializer):
    parameters = StrictFloatField(**limits("model.parameters"))
    layers = StrictIntegerField(**limits("model.layers", integer=True))
    hidden_size = StrictIntegerField(**limits("model.hidden_size", integer=True))
    attention_heads = StrictIntegerField(**limits("model.attention_heads", integer=True))
    key_value_heads = StrictIntegerField(
        required=False, allow_null=True, **limits("model.key_value_heads", integer=True)
    )
    weight_precision = serializers.ChoiceField(
        choices=formulas.WEIGHT_PRECISIONS, default="bf16", help_text="How the weights are stored."
    )
    kv_precision = serializers.ChoiceField(
        choices=["fp32", "bf16", "fp16", "fp8", "int8"], default="bf16"
    )


class ServingReplicaSerializer(StrictSerializer):
    gpu = StrictCharField(max_length=60, help_text="A catalog name or alias.")
    context_length = StrictIntegerField(
        default=4096,
        help_text="Tokens of context each sequence keeps (prompt + output).",
        **limits("serving.context_length", integer=True),
    )
    batch_size = StrictIntegerField(
        default=1,
        help_text="Sequences served at once on a replica.",
        **limits("serving.batch_size", integer=True),
    )


class ServingRequestSerializer(StrictSerializer):
    requests_per_month = StrictFloatField(**limits("serving.requests_per_month"))
    tokens_per_request = StrictFloatField(**limits("serving.tokens_per_request"))
    tokens_per_second_per_gpu = StrictFloatField(
        help_text="Measured serving throughput of one GPU.",
        **limits("serving.tokens_per_second_per_gpu"),
    )
    months = StrictIntegerField(**limits("serving.months", integer=True))
    hourly_rate_per_gpu = MoneyField(
        max_digits=14, decimal_places=4, min_value=Decimal("0"), help_text='e.g. "2.00"'
    )
    currency = StrictRegexField(CURRENCY, default="USD")
    billing = serializers.ChoiceField(
        choices=["busy", "always_on"],
        default="busy",
        help_text="busy: GPU-hours actually serving; always_on: gpus x 730 h a month.",
    )
    gpus = StrictIntegerField(default=1, **limits("serving.gpus", integer=True))
    training_cost = MoneyField(
        max_digits=16, decimal_places=2, min_value=Decimal("0"), required=False
    )
    local = LocalHardwareSerializer(required=False)
    input_tokens_per_request = StrictFloatField(
        required=False,
        help_text="Prompt tokens per request, priced apart from the output.",
        **limits("serving.input_tokens_per_request"),
    )
    input_tokens_per_second_per_gpu = StrictFloatField(
        required=False,
        help_text="Measured prefill throughput of one GPU (input tokens).",
        **limits("serving.input_tokens_per_second_per_gpu"),
    )
    model = ServingModelSerializer(
        required=False, help_text="For the KV cache and the GPUs per replica (with gpu)."
    )
    replica = ServingReplicaSerializer(
        required=False, help_text="The GPU, context and batch one replica serves (with model)."
    )


class LocalServingSerializer(serializers.Serializer[Any]):
    monthly_cost = MoneySerializer()
    cumulative = MoneySerializer(many=True)
    break_even_month = StrictIntegerField(allow_null=True)
    within_lifetime = StrictBooleanField()


class ServingSerializer(serializers.Serializer[Any]):
    tokens_per_month = StrictFloatField()
    gpu_hours_per_month = StrictFloatField(help_text="Busy GPU-hours.")
    billed_hours_per_month = StrictFloatField()
    load = StrictFloatField(help_text="Busy over billed hours (always_on).")
    monthly_cost = MoneySerializer()
    cumulative = MoneySerializer(many=True)
    month_exceeding_training = StrictIntegerField(allow_null=True)
    local = LocalServingSerializer(allow_null=True)
    cost_per_million_output_tokens = MoneySerializer(
        help_text="Output tokens at the measured throughput and the hourly rate."
    )
    cost_per_million_input_tokens = MoneySerializer(
        allow_null=True, help_text="Input tokens at the prefill throughput, when given."
    )
    kv_cache_bytes = StrictIntegerField(allow_null=True, help_text="Per replica (with model).")
    weight_bytes = StrictIntegerField(allow_null=True)
    gpus_per_replica = StrictIntegerField(allow_null=True, help_text="With model and gpu.")
    recommendations = serializers.ListField(child=StrictCharField())


# --------------------------------------------------------------------------- hardware options


class OptionPilotSerializer(PilotSpecSerializer):
    gpu = StrictCharField(
        max_length=60,
        required=False,
        help_text="The GPU the pilot ran on (default: hardware.gpu).",
    )


class HardwareOptionsRequestSerializer(EstimatePreviewSerializer):
    pilot = OptionPilotSerializer(required=False, allow_null=True)
    rates = serializers.DictField(
        child=MoneyField(max_digits=14, decimal_places=4, min_value=Decimal("0")),
        required=False,
        help_text='GPU name -> price per GPU-hour, e.g. {"H100-SXM": "2.50"}.',
    )
    window_hours = StrictFloatField(
        required=False,
        allow_null=True,
        help_text="Calendar window the job must fit in (fits_window).",
        **limits("window_hours"),
    )


class PlanChoiceSerializer(serializers.Serializer[Any]):
    kind = StrictCharField(help_text='"hourly", "lots" or "none".')
    description = StrictCharField()
    rate_per_gpu_hour = StrictCharField(allow_null=True)
    lots = serializers.ListField(child=StrictCharField())


class HardwareOptionSerializer(serializers.Serializer[Any]):
    gpu = StrictCharField()
    count = StrictIntegerField()
    fits_in_memory = StrictBooleanField()
    wall_hours = StrictFloatField()
    gpu_hours = StrictFloatField()
    time_source = StrictCharField(help_text='"pilot", "projected" or "assumed".')
    assumption = StrictCharField()
    plan = PlanChoiceSerializer()
    total_cost = MoneySerializer(allow_null=True)
    fits_window = StrictBooleanField(allow_null=True)


class ExcludedSerializer(serializers.Serializer[Any]):
    gpu = StrictCharField()
    reason = StrictCharField()


class HardwareOptionsSerializer(serializers.Serializer[Any]):
    options = HardwareOptionSerializer(many=True, help_text="Ranked by ascending total cost.")
    excluded = ExcludedSerializer(many=True)


def option_json(option: options.HardwareOption) -> dict[str, Any]:
    plan = option.plan
    return {
        "gpu": option.gpu,
        "count": option.count,
        "fits_in_memory": option.fits_in_memory,
        "wall_hours": option.wall_hours,
        "gpu_hours": option.gpu_hours,
        "time_source": option.time_source,
        "assumption": option.assumption,
        "plan": {
            "kind": plan.kind,
            "description": plan.description,
            "rate_per_gpu_hour": None
            if plan.rate_per_gpu_hour is None
            else str(plan.rate_per_gpu_hour),
            "lots": list(plan.lots),
        },
        "total_cost": _money(option.total_cost),
        "fits_window": option.fits_window,
    }


def options_json(
    ranked: list[options.HardwareOption], excluded: list[options.Excluded]
) -> dict[str, Any]:
    return {
        "options": [option_json(o) for o in ranked],
        "excluded": [{"gpu": e.gpu, "reason": e.reason} for e in excluded],
    }


# --------------------------------------------------------------------------- catalog


class HourlyRateSerializer(StrictModelSerializer[HourlyRate]):
    price_note = serializers.SerializerMethodField(
        help_text="Said when the price is illustrative, undated or older than a year."
    )

    class Meta:
        model = HourlyRate
        fields = [
            "provider",
            "rate_per_gpu_hour",
            "currency",
            "source",
            "as_of",
            "illustrative",
            "price_note",
        ]
        read_only_fields = fields

    def get_price_note(self, rate: HourlyRate) -> str:
        return catalog.price_note(rate.illustrative, rate.as_of, date.today())


class GpuModelSerializer(StrictModelSerializer[GpuModel]):
    hourly_rates = HourlyRateSerializer(many=True, read_only=True)

    class Meta:
        model = GpuModel
        fields = [
            "id",
            "name",
            "memory_bytes",
            "peak_flops",
            "tdp_watts",
            "source",
            "card_to_card_bytes_per_second",
            "node_to_node_bytes_per_second",
            "interconnect_source",
            "hourly_rates",
        ]
        read_only_fields = fields


class RentalPlanSerializer(StrictModelSerializer[RentalPlan]):
    gpu: serializers.SlugRelatedField[GpuModel] = serializers.SlugRelatedField(
        slug_field="name", read_only=True
    )
    gpu_memory_bytes = StrictIntegerField(source="gpu.memory_bytes", read_only=True)
    price_per_hour = serializers.DecimalField(
        max_digits=14,
        decimal_places=4,
        read_only=True,
        help_text="The whole lot's price per hour (all its GPUs).",
    )
    price_per_gpu_hour = serializers.DecimalField(
        max_digits=14,
        decimal_places=4,
        read_only=True,
        help_text="Price per GPU-hour: price / (duration_hours x gpus_per_lot).",
    )
    price_note = serializers.SerializerMethodField(
        help_text="Said when the price is illustrative, undated or older than a year."
    )

    class Meta:
        model = RentalPlan
        fields = [
            "id",
            "provider",
            "name",
            "gpu",
            "gpus_per_lot",
            "gpu_memory_bytes",
            "duration_hours",
            "price",
            "currency",
            "price_per_hour",
            "price_per_gpu_hour",
            "illustrative",
            "note",
            "source",
            "as_of",
            "price_note",
        ]
        read_only_fields = fields

    def get_price_note(self, plan: RentalPlan) -> str:
        return catalog.price_note(plan.illustrative, plan.as_of, date.today())


# --------------------------------------------------------------------------- forecast answer


class ForecastItemSerializer(serializers.Serializer[Any]):
    id = StrictIntegerField()
    name = StrictCharField()
    tier = StrictCharField()
    role = StrictCharField()
    status = StrictCharField(help_text="The item's status: planned, done, cut, stopped.")
    gpu = StrictCharField(allow_blank=True)
    planned_hours = StrictFloatField()
    reserved_hours = StrictFloatField(
        allow_null=True, help_text="From the frozen baseline; null when added after commit."
    )
    forecast_hours = StrictFloatField()
    observed_hours = StrictFloatField(allow_null=True)
    time_source = StrictCharField(help_text='"assumed", "pilot" or "observed".')
    note = StrictCharField()


class ForecastTotalsSerializer(serializers.Serializer[Any]):
    reserved_hours = StrictFloatField()
    forecast_hours = StrictFloatField()
    observed_hours = StrictFloatField()


class ForecastFiguresSerializer(serializers.Serializer[Any]):
    """The plan figures' names (docs/domain.md §8.5) with the forecast hours."""

    work_hours = StrictFloatField(help_text="Forecast machine hours of the items not cut.")
    gpu_hours = StrictFloatField(help_text="Each item's forecast work hours × its GPUs.")
    calendar_hours = StrictFloatField(help_text="The forecast calendar, first stage to last.")
    machine_hours = StrictFloatField(
        help_text="What the lots must hold: the calendar's machine stages, the items' and those "
        "tied to no item."
    )
    untied_machine_hours = StrictFloatField(
        help_text="Of the machine time, the stages tied to no item (setup, retrieval)."
    )


class ForecastSerializer(serializers.Serializer[Any]):
    campaign = StrictIntegerField()
    status = StrictCharField(help_text='"fresh", "stale" (recompute queued) or "failed".')
    stale = StrictBooleanField()
    stale_since = serializers.DateTimeField(allow_null=True)
    computed_at = serializers.DateTimeField(allow_null=True)
    input_version = StrictIntegerField()
    computed_version = StrictIntegerField(allow_null=True)
    error = StrictCharField(allow_blank=True)
    time_source = StrictCharField(
        help_text='"pilot" once a measured pilot drives an item\'s forecast, else "assumed".'
    )
    window_hours = StrictFloatField()
    reserved_basis = StrictCharField(
        help_text='"baseline" (frozen at commit) or "plan" (draft, as it stands).'
    )
    reserved_hours = StrictFloatField()
    forecast_hours = StrictFloatField()
    observed_hours = StrictFloatField()
    fits_in_window = StrictBooleanField()
    uncommitted_hours = StrictFloatField()
    over_hours = StrictFloatField()
    totals = ForecastTotalsSerializer()
    items = ForecastItemSerializer(many=True)
    advice = serializers.ListField(child=StrictCharField())
    lots = serializers.DictField()
    figures = ForecastFiguresSerializer(required=False)
