"""Keep the GPU models and rental plans in the database in step with `catalog.domain.catalog`."""

from __future__ import annotations

from typing import Any

from catalog.domain import catalog


def seed_catalog(apps: Any = None) -> None:
    """Upsert every catalog GPU, plan and hourly rate; rows added by people are left alone.

    With `apps` (a migration's app registry) it uses the historical models.
    """
    GpuModel: Any
    RentalPlan: Any
    HourlyRate: Any = None
    if apps is None:
        from catalog.models import GpuModel, HourlyRate, RentalPlan
    else:
        GpuModel = apps.get_model("catalog", "GpuModel")
        RentalPlan = apps.get_model("catalog", "RentalPlan")
        try:
            HourlyRate = apps.get_model("catalog", "HourlyRate")
        except LookupError:
            HourlyRate = None  # a migration before 0003 has no hourly rates
    gpus = _seed_gpus(GpuModel)
    _seed_plans(RentalPlan, gpus)
    if HourlyRate is not None:
        _seed_rates(HourlyRate, gpus)


def _fields(model: Any) -> set[str]:
    # An early migration's historical models lack the columns later ones add: set only those.
    return {f.name for f in model._meta.get_fields()}


def _seed_gpus(GpuModel: Any) -> dict[str, Any]:
    known = _fields(GpuModel)
    gpus = {}
    for spec in catalog.GPUS.values():
        values: dict[str, Any] = {
            "memory_bytes": spec.memory_bytes,
            "peak_flops": dict(spec.peak_flops),
            "source": spec.source[:300],
            "tdp_watts": spec.tdp_watts,
            "card_to_card_bytes_per_second": spec.card_to_card_bytes_per_second,
            "node_to_node_bytes_per_second": spec.node_to_node_bytes_per_second,
            "interconnect_source": spec.interconnect_source[:300],
            "bus_bandwidth": {} if spec.links is None else spec.links.as_json(),
            "memory_bandwidth_bytes_per_second": spec.memory_bandwidth_bytes_per_second,
        }
        gpus[spec.name], _ = GpuModel.objects.update_or_create(
            name=spec.name, defaults={k: v for k, v in values.items() if k in known}
        )
    return gpus


def _seed_plans(RentalPlan: Any, gpus: dict[str, Any]) -> None:
    known = _fields(RentalPlan)
    for plan in catalog.RENTAL_PLANS:
        values: dict[str, Any] = {
            "gpu": gpus[plan.gpu],
            "gpus_per_lot": plan.gpus_per_lot,
            "duration_hours": plan.duration_hours,
            "price": plan.price,
            "currency": plan.currency,
            "note": plan.note[:300],
            "illustrative": plan.illustrative,
            "source": plan.source[:300],
            "as_of": plan.as_of,
        }
        RentalPlan.objects.update_or_create(
            provider=plan.provider,
            name=plan.name,
            defaults={k: v for k, v in values.items() if k in known},
        )


def _seed_rates(HourlyRate: Any, gpus: dict[str, Any]) -> None:
    # Before catalog 0004 an hourly rate has no instance size (one rate per provider and GPU).
    has_instances = "gpus_per_instance" in _fields(HourlyRate)
    for rate in catalog.HOURLY_RATES:
        if not has_instances and rate.gpus_per_instance != 8:
            continue
        key = {"gpus_per_instance": rate.gpus_per_instance} if has_instances else {}
        HourlyRate.objects.update_or_create(
            provider=rate.provider,
            gpu=gpus[rate.gpu],
            **key,
            defaults={
                "rate_per_gpu_hour": rate.rate_per_gpu_hour,
                "currency": rate.currency,
                "source": rate.source[:300],
                "as_of": rate.as_of,
                "illustrative": rate.illustrative,
            },
        )
