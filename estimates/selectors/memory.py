"""GPU memory: the estimator's figure per device against the measured peak (docs/domain.md
§10, issue 33). The estimate is the campaign forecast's calculator for each item
(``memory_per_device_bytes.total``, stored with the forecast); the peak is the highest memory one
GPU of the item's runs used, from their ``system/gpu_*_memory_usage_megabytes`` summaries
(campaigns/selectors/run_metrics.py). Both in bytes; the ratio is measured ÷ estimated."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from campaigns.models import Campaign, PlannedItem, Run
from campaigns.selectors.run_metrics import peak_gpu_memory_mb
from estimates.models import Estimate


@dataclass(frozen=True)
class Memory:
    item: str
    estimated_bytes: int | None
    measured_bytes: int | None

    @property
    def estimated_gb(self) -> str:
        return _gb(self.estimated_bytes)

    @property
    def measured_gb(self) -> str:
        return _gb(self.measured_bytes)

    @property
    def ratio(self) -> float | None:
        if not self.estimated_bytes or self.measured_bytes is None:
            return None
        return self.measured_bytes / self.estimated_bytes


def _gb(size: int | None) -> str:
    return "—" if size is None else f"{size / 1e9:.1f} GB"


def estimated_per_item(campaign_id: int) -> dict[int, int]:
    """By item id, the forecast's memory per device in bytes (items the calculator priced)."""
    outputs: Any = (
        Estimate.objects.filter(campaign_id=campaign_id, item__isnull=True)
        .values_list("outputs", flat=True)
        .first()
    )
    found: dict[int, int] = {}
    for row in (outputs or {}).get("items", []) if isinstance(outputs, dict) else []:
        memory = (row.get("calculator") or {}).get("memory_per_device_bytes")
        if isinstance(memory, dict):  # the preview's shape; the forecast keeps the total
            memory = memory.get("total")
        if isinstance(row.get("id"), int) and isinstance(memory, int | float):
            found[row["id"]] = int(memory)
    return found


def campaign_memory(campaign: Campaign) -> list[Memory]:
    """Each item with an estimate or a measurement: three statements."""
    estimated = estimated_per_item(campaign.pk)
    runs = Run.objects.filter(campaign=campaign)
    peaks = peak_gpu_memory_mb(runs)
    by_item: dict[int, float] = {}
    for run_pk, item_id in runs.filter(pk__in=list(peaks)).values_list("pk", "variant_id"):
        if item_id is not None:
            by_item[item_id] = max(by_item.get(item_id, 0.0), peaks[run_pk])
    rows = []
    for item in PlannedItem.objects.filter(campaign=campaign).order_by("id").only("id", "name"):
        measured = by_item.get(item.pk)
        if item.pk in estimated or measured is not None:
            rows.append(
                Memory(
                    item.name,
                    estimated.get(item.pk),
                    None if measured is None else int(measured * 1e6),
                )
            )
    return rows


def run_memory(run: Run) -> Memory | None:
    """The run's measured peak beside its item's estimate; None when neither is known."""
    peak = peak_gpu_memory_mb(Run.objects.filter(pk=run.pk)).get(run.pk)
    estimate = estimated_per_item(run.campaign_id).get(run.variant_id) if run.variant_id else None
    if peak is None and estimate is None:
        return None
    item = run.variant.name if run.variant is not None else "no item"
    return Memory(item, estimate, None if peak is None else int(peak * 1e6))
