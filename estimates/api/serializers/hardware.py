"""The preview's ``hardware`` object: a catalog GPU or a custom one, the count, the parallelism."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from campaigns.api.fields import StrictCharField, StrictIntegerField
from catalog.domain import catalog
from estimates.api.serializers.base import StrictSerializer, ranged
from estimates.domain import formulas


class PeakFlopsSerializer(StrictSerializer):
    fp32 = ranged("hardware.custom.peak_flops", required=False)
    tf32 = ranged("hardware.custom.peak_flops", required=False)
    bf16 = ranged("hardware.custom.peak_flops", required=False)
    fp16 = ranged("hardware.custom.peak_flops", required=False)
    fp8 = ranged("hardware.custom.peak_flops", required=False)
    fp4 = ranged("hardware.custom.peak_flops", required=False)

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if not attrs:
            raise serializers.ValidationError("Give the dense peak FLOP/s of one precision.")
        return attrs


class CustomHardwareSerializer(StrictSerializer):
    name = StrictCharField(max_length=60)
    memory_bytes = ranged("hardware.custom.memory_bytes")
    peak_flops = PeakFlopsSerializer(help_text="Precision -> dense FLOP/s of one device.")
    tdp_watts = ranged("hardware.custom.tdp_watts", optional=True)

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
    count = ranged("hardware.count", default=1)
    utilization = ranged("hardware.utilization", default=0.4, help_text="Fraction of peak FLOP/s.")
    zero_stage = StrictIntegerField(default=0, min_value=0, max_value=3)
    tensor_parallel = ranged("hardware.tensor_parallel", default=1)
    pipeline_parallel = ranged("hardware.pipeline_parallel", default=1)
    utilization_kind = serializers.ChoiceField(
        choices=formulas.UTILIZATION_KINDS,
        default="hfu",
        help_text="hfu: FLOPs executed incl. recomputation; mfu: model FLOPs (PaLM appendix B).",
    )
    offload = serializers.ChoiceField(choices=formulas.OFFLOADS, default="none")
    gpus_per_node = ranged(
        "hardware.gpus_per_node",
        optional=True,
        help_text="GPUs a node holds (default: the GPU's reference system, 8; 72 for GB200): "
        "where collectives leave NVLink, and DeepSpeed's CPU memory per node.",
    )
    expert_parallel = ranged(
        "hardware.expert_parallel",
        default=1,
        help_text="Ranks the experts are divided over (needs model.experts).",
    )
    context_parallel = ranged(
        "hardware.context_parallel",
        default=1,
        help_text="Ranks the sequence is divided over (ring attention).",
    )
    expert_parallel_placement = serializers.ChoiceField(
        choices=formulas.EXPERT_PLACEMENTS,
        default="intra_node",
        help_text="Expert groups inside a node first (intra_node) or one rank per node "
        "(across_nodes): the all-to-all's link.",
    )

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if ("gpu" in attrs) == ("custom" in attrs):
            raise serializers.ValidationError({"gpu": ["Give exactly one of gpu or custom."]})
        return attrs
