"""The catalog's GPUs as the calculator reads them: one by name or alias, and every one, as the
pure `catalog.domain.catalog.GpuModel` the formulas take."""

from __future__ import annotations

from catalog.domain import catalog
from catalog.models import GpuModel
from estimates.domain import formulas


def catalog_gpu(name: str, field: str, hint: str = "") -> catalog.GpuModel:
    """The catalog's GPU named ``name`` (or an alias of it); an unknown name is refused naming
    ``field`` with the names known, and ``hint`` after them (the API answers 400)."""
    row = GpuModel.objects.lookup(name)
    if row is None:
        known = ", ".join(GpuModel.objects.values_list("name", flat=True))
        raise formulas.EstimateInputError(
            field, f"unknown GPU model {name!r}; known: {known}{hint}"
        )
    return row.as_spec()


def catalog_gpus() -> list[catalog.GpuModel]:
    """Every GPU of the catalog, by name."""
    return [row.as_spec() for row in GpuModel.objects.order_by("name")]
