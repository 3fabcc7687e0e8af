"""GET /estimates/hardware/ and the rental plans: the catalog rows with their sources and dates."""

from __future__ import annotations

from datetime import date
from typing import Any

from rest_framework import serializers

from campaigns.api.fields import StrictIntegerField, StrictModelSerializer
from catalog.domain import catalog
from catalog.models import GpuModel, HourlyRate, RentalPlan


# A catalog price with the note saying how far to trust it (catalog.price_note). A comment, not
# a docstring: drf-spectacular would take a base's docstring as each serializer's description.
class PriceNoted(serializers.Serializer[Any]):
    price_note = serializers.SerializerMethodField(
        help_text="Said when the price is illustrative, undated or older than a year."
    )

    def get_price_note(self, row: HourlyRate | RentalPlan) -> str:
        return catalog.price_note(row.illustrative, row.as_of, date.today())


class HourlyRateSerializer(PriceNoted, StrictModelSerializer[HourlyRate]):
    class Meta:
        model = HourlyRate
        fields = [
            "provider",
            "rate_per_gpu_hour",
            "currency",
            "source",
            "as_of",
            "illustrative",
            "gpus_per_instance",
            "price_note",
        ]
        read_only_fields = fields


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
            "bus_bandwidth",
            "memory_bandwidth_bytes_per_second",
            "hourly_rates",
        ]
        read_only_fields = fields


class RentalPlanSerializer(PriceNoted, StrictModelSerializer[RentalPlan]):
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
