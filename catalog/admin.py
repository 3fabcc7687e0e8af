"""Admin for the catalog: GPU models and rental plans.

The catalog is shared by every team: staff read it, only superusers change it (a wrong price
would mislead every team's lot advice).
"""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.http import HttpRequest

from catalog.models import GpuModel, RentalPlan


class CatalogAdmin(admin.ModelAdmin[Any]):
    def has_module_permission(self, request: HttpRequest) -> bool:
        return bool(request.user.is_active and request.user.is_staff)

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return self.has_module_permission(request)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return bool(request.user.is_active and request.user.is_superuser)

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return bool(request.user.is_active and request.user.is_superuser)

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return bool(request.user.is_active and request.user.is_superuser)


@admin.register(GpuModel)
class GpuModelAdmin(CatalogAdmin):
    list_display = ["name", "memory_gib", "peak_tflops", "tdp_watts", "source"]
    search_fields = ["name", "source"]
    fields = [
        "name",
        "memory_bytes",
        "peak_flops",
        "tdp_watts",
        "source",
        "memory_bandwidth_bytes_per_second",
        "bus_bandwidth",
    ]

    @admin.display(description="memory (GiB)", ordering="memory_bytes")
    def memory_gib(self, obj: GpuModel) -> str:
        return f"{obj.memory_bytes / 2**30:g}"

    @admin.display(description="dense peak (TFLOP/s)")
    def peak_tflops(self, obj: GpuModel) -> str:
        peaks = obj.peak_flops if isinstance(obj.peak_flops, dict) else {}
        return ", ".join(
            f"{precision} {value / 1e12:g}"
            for precision, value in peaks.items()
            if isinstance(value, int | float)
        )


@admin.register(RentalPlan)
class RentalPlanAdmin(CatalogAdmin):
    # The lot's terms, edited as they are listed (the listing adds the derived prices).
    _terms = ["provider", "name", "gpu", "gpus_per_lot", "duration_hours", "price", "currency"]
    list_display = [*_terms, "lot_price_per_hour", "gpu_hour_price", "illustrative"]
    list_filter = ["provider", "gpu", "currency", "illustrative"]
    search_fields = ["provider", "name", "gpu__name"]
    list_select_related = ["gpu"]
    fields = [*_terms, "illustrative", "note"]

    @admin.display(description="per lot-hour (all its GPUs)")
    def lot_price_per_hour(self, obj: RentalPlan) -> str:
        return f"{obj.price_per_hour} {obj.currency}"

    @admin.display(description="per GPU-hour")
    def gpu_hour_price(self, obj: RentalPlan) -> str:
        return f"{obj.price_per_gpu_hour} {obj.currency}"
