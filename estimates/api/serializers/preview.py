"""POST /estimates/preview/: the request (the input groups composed), the item's ``estimate_spec``
checked by the same serializers, the formulas' input built from them, and the answer.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from rest_framework import serializers

from campaigns.api.fields import (
    StrictBooleanField,
    StrictCharField,
    StrictFloatField,
    StrictIntegerField,
)
from catalog.domain import catalog
from estimates.api.serializers.base import MoneySerializer, StrictSerializer, money_json
from estimates.api.serializers.cost_and_reliability import (
    CostSpecSerializer,
    EnergySpecSerializer,
    ReliabilitySpecSerializer,
)
from estimates.api.serializers.hardware import HardwareSpecSerializer
from estimates.api.serializers.model import ModelSpecSerializer
from estimates.api.serializers.training import (
    OverheadsSerializer,
    PilotSpecSerializer,
    TrainingSpecSerializer,
)
from estimates.domain import formulas


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


class MemorySerializer(serializers.Serializer[Any]):
    weights = StrictIntegerField()
    gradients = StrictIntegerField()
    optimizer = StrictIntegerField()
    activations = StrictIntegerField()
    total = StrictIntegerField()


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
    global_batch_size = StrictFloatField(
        help_text="Samples per optimizer step: micro-batch x accumulation x data-parallel."
    )


class IntervalSerializer(serializers.Serializer[Any]):
    low = StrictFloatField()
    high = StrictFloatField()
    coverage = StrictFloatField(help_text="The share of published figures it claims to hold: 0.8.")
    kind = StrictCharField(help_text="What the estimate rests on (docs/domain.md §24.12).")
    cases = StrictIntegerField(help_text="Published figures of this kind it is derived from.")


class CostIntervalSerializer(serializers.Serializer[Any]):
    low = MoneySerializer()
    high = MoneySerializer()


class IntervalsSerializer(serializers.Serializer[Any]):
    wall_hours = IntervalSerializer()
    memory_per_device_bytes = IntervalSerializer(help_text="Of the total per device.")
    cost = CostIntervalSerializer(allow_null=True, help_text="The time's range at the rate.")


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
    fits_in_memory = StrictBooleanField(
        help_text="The 80% range's high end fits the device (docs/domain.md §24.12)."
    )
    fits_at_estimate = StrictBooleanField(help_text="The estimate itself fits.")
    intervals = IntervalsSerializer(help_text="80% ranges from the published-figures table.")
    activations_counted = StrictBooleanField()
    cost = MoneySerializer(allow_null=True)
    time_source = StrictCharField(help_text='"pilot" or "assumed".')
    pilot_utilization = StrictFloatField(allow_null=True)
    data_parallel = StrictIntegerField()
    gpu = GpuSummarySerializer()
    levers = LeverSerializer(many=True)
    recommendations = serializers.ListField(child=StrictCharField())


def _section(value: Any) -> dict[str, Any] | None:
    """A result section (communication, DeepSpeed's estimate, energy, checkpointing, memory) as
    the answer's JSON object: the dataclasses' field names are the API's; null when not asked."""
    return None if value is None else dataclasses.asdict(value)


def result_json(
    result: formulas.EstimateResult, gpu: catalog.GpuModel, precision: str
) -> dict[str, Any]:
    return {
        "training_flops": result.training_flops,
        "pf_days": result.pf_days,
        "model_flops": result.model_flops,
        "executed_flops": result.executed_flops,
        "mfu": result.mfu,
        "hfu": result.hfu,
        "deepspeed": _section(result.deepspeed),
        "cpu_memory_bytes": result.cpu_memory_bytes,
        "energy": _section(result.energy),
        "checkpointing": _section(result.checkpointing),
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
        "communication": _section(result.communication),
        "narayanan_flops": result.narayanan_flops,
        "tokens": result.tokens,
        "gpu_hours": result.gpu_hours,
        "wall_hours": result.wall_hours,
        "training_wall_hours": result.training_wall_hours,
        "overhead_hours": result.overhead_hours,
        "memory_per_device_bytes": _section(result.memory),
        "device_memory_bytes": result.device_memory_bytes,
        "fits_in_memory": result.fits_in_memory,
        "fits_at_estimate": result.fits_at_estimate,
        "intervals": intervals_json(result),
        "activations_counted": result.activations_counted,
        "cost": money_json(result.cost),
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
        "levers": [lever_json(lever) for lever in result.levers],
        "recommendations": list(result.recommendations),
    }


def interval_json(found: formulas.Interval | None) -> dict[str, Any] | None:
    return None if found is None else dataclasses.asdict(found)


def intervals_json(result: formulas.EstimateResult) -> dict[str, Any]:
    cost = result.cost_interval
    return {
        "wall_hours": interval_json(result.time_interval),
        "memory_per_device_bytes": interval_json(result.memory_interval),
        "cost": None if cost is None else {"low": money_json(cost[0]), "high": money_json(cost[1])},
    }


def lever_json(lever: formulas.Lever) -> dict[str, Any]:
    return {
        "name": lever.name,
        "description": lever.description,
        "training_flops": lever.training_flops,
        "wall_hours": lever.wall_hours,
        "gpu_hours": lever.gpu_hours,
        "cost": money_json(lever.cost),
        "loss_ratio": lever.loss_ratio,
    }
