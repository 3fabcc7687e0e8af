"""The catalog: GPU models and the rental plans sold on them (docs/domain.md §9, §10).

The bottom layer: every other app reads these rows, none of them is read from here. The tables
were created by the estimates app and keep their names (a state-only move, catalog migration
0001); the seed rows are frozen in catalog migration 0002.
"""

from __future__ import annotations

from decimal import Decimal

from django.core.validators import MinValueValidator
from django.db import models

from catalog.domain import catalog, links
from catalog.domain.gpu_names import normalize_gpu
from catalog.validators import currency_validator


class GpuModelQuerySet(models.QuerySet["GpuModel"]):
    def lookup(self, name: str) -> GpuModel | None:
        """The GPU called `name`: exact, then ignoring case, spaces, hyphens and "NVIDIA"."""
        if not isinstance(name, str) or not name.strip():
            return None
        found = self.filter(name=name).first() or self.filter(name__iexact=name).first()
        if found is not None:
            return found
        wanted = normalize_gpu(name)
        found = next((g for g in self.all() if normalize_gpu(g.name) == wanted), None)
        if found is not None:
            return found
        # An alias model cards use ("H100-80GB" for the H100 SXM): catalog.ALIASES.
        canonical = catalog.canonical_name(name)
        return None if canonical is None else self.filter(name=canonical).first()


class GpuModel(models.Model):
    name = models.CharField(max_length=40, unique=True)
    memory_bytes = models.BigIntegerField()
    peak_flops = models.JSONField(help_text="Precision → dense FLOP/s, e.g. {'bf16': 3.12e14}.")
    source = models.CharField(max_length=300, blank=True)
    tdp_watts = models.FloatField(
        null=True, blank=True, help_text="Board power from the datasheet, in watts (energy)."
    )
    # docs/domain.md §24.6: unidirectional bytes/s per GPU, in the node and between nodes.
    card_to_card_bytes_per_second = models.FloatField(
        null=True, blank=True, help_text="NVLink / Infinity Fabric / PCIe, one direction."
    )
    node_to_node_bytes_per_second = models.FloatField(
        null=True, blank=True, help_text="The reference system's network per GPU, one direction."
    )
    interconnect_source = models.CharField(max_length=300, blank=True)
    # docs/domain.md §24.6: measured nccl-tests bus bandwidth per collective on each tier, with
    # sources (catalog.domain.links.LinkProfile.as_json); empty: only the specs above are known.
    bus_bandwidth = models.JSONField(
        default=dict,
        blank=True,
        help_text="Per tier (card_to_card, node_to_node): bus bandwidth per collective in bytes/s, "
        "latency_seconds, source; and gpus_per_node.",
    )
    memory_bandwidth_bytes_per_second = models.FloatField(
        null=True, blank=True, help_text="HBM/GDDR bandwidth from the datasheet (roofline)."
    )

    objects = GpuModelQuerySet.as_manager()

    class Meta:
        # The tables keep the names they had in the estimates app (docs/architecture.md).
        db_table = "estimates_gpumodel"
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    def as_spec(self) -> catalog.GpuModel:
        """The pure formulas' view of this row (the table, not the static catalog, is the truth:
        GPUs added in the admin must be usable by the calculator too)."""
        peak = {
            str(k): float(v)
            for k, v in (self.peak_flops or {}).items()
            # A precision the formulas do not know would make the spec refuse the whole card.
            if k in catalog.PRECISIONS and isinstance(v, int | float) and not isinstance(v, bool)
        }
        return catalog.GpuModel(
            name=self.name,
            memory_bytes=int(self.memory_bytes),
            peak_flops=peak,
            source=self.source,
            tdp_watts=self.tdp_watts,
            card_to_card_bytes_per_second=self.card_to_card_bytes_per_second,
            node_to_node_bytes_per_second=self.node_to_node_bytes_per_second,
            interconnect_source=self.interconnect_source,
            links=links.profile_from_json(self.bus_bandwidth),
            memory_bandwidth_bytes_per_second=self.memory_bandwidth_bytes_per_second,
        )


class RentalPlan(models.Model):
    provider = models.CharField(max_length=60)
    name = models.CharField(max_length=100)
    gpu = models.ForeignKey(GpuModel, on_delete=models.PROTECT, related_name="plans")
    gpus_per_lot = models.PositiveIntegerField(default=1, validators=[MinValueValidator(1)])
    duration_hours = models.DecimalField(
        max_digits=9, decimal_places=2, validators=[MinValueValidator(Decimal("0.01"))]
    )
    # Priced per lot: a lot that includes two GPUs is not charged twice.
    price = models.DecimalField(max_digits=14, decimal_places=2)
    currency = models.CharField(max_length=3, default="USD", validators=[currency_validator])
    note = models.CharField(max_length=300, blank=True)
    illustrative = models.BooleanField(
        default=False, help_text="A made-up catalogue figure, not a provider's published price."
    )
    # docs/domain.md §24.8: where the price comes from and when it was published.
    source = models.CharField(max_length=300, blank=True)
    as_of = models.DateField(null=True, blank=True, help_text="When the price was published.")

    class Meta:
        db_table = "estimates_rentalplan"
        ordering = ["provider", "gpu__name", "duration_hours"]
        constraints = [
            models.UniqueConstraint(fields=["provider", "name"], name="plan_name_unique")
        ]

    def __str__(self) -> str:
        return f"{self.provider} {self.name} ({self.price} {self.currency})"

    @property
    def price_per_hour(self) -> Decimal:
        """Price of the whole lot per hour (all its GPUs together); 0 for a row without hours
        (the validator refuses them, but the listing must not fail on an older row)."""
        if not self.duration_hours or self.duration_hours <= 0:
            return Decimal("0.0000")
        # price < 1e12 and hours >= 0.01: at most 18 digits, within the 28-digit context.
        return (self.price / self.duration_hours).quantize(Decimal("0.0001"))

    @property
    def price_per_gpu_hour(self) -> Decimal:
        """Price per GPU-hour: the lot's price over its GPUs x hours, comparable with an hourly
        rate per GPU (a 2-GPU lot at 648.00 for 72 h is 4.50 per GPU-hour, not 9.00)."""
        if not self.duration_hours or self.duration_hours <= 0 or self.gpus_per_lot < 1:
            return Decimal("0.0000")
        return (self.price / (self.duration_hours * self.gpus_per_lot)).quantize(Decimal("0.0001"))


class HourlyRate(models.Model):
    """A provider's published on-demand price per GPU-hour (docs/domain.md §24.8): billed by the
    hour, so it is a rate for ``hardware-options``, never a lot to pack runs into."""

    provider = models.CharField(max_length=60)
    gpu = models.ForeignKey(GpuModel, on_delete=models.PROTECT, related_name="hourly_rates")
    rate_per_gpu_hour = models.DecimalField(
        max_digits=10, decimal_places=4, validators=[MinValueValidator(Decimal("0"))]
    )
    currency = models.CharField(max_length=3, default="USD", validators=[currency_validator])
    source = models.CharField(max_length=300)
    as_of = models.DateField(null=True, blank=True)
    illustrative = models.BooleanField(default=False)
    # The GPUs the provider rents together at this rate (an 8-GPU instance: 8): a job on fewer
    # still pays for all of them (docs/domain.md §24.8).
    gpus_per_instance = models.PositiveIntegerField(
        default=1,
        validators=[MinValueValidator(1)],
        help_text="GPUs rented together at this rate (8 for an 8-GPU instance).",
    )

    class Meta:
        ordering = ["gpu__name", "rate_per_gpu_hour"]
        # One rate per provider, GPU and instance size: Lambda sells the H100 by the 8-GPU
        # instance and by the single GPU, at different rates (docs/domain.md §24.8).
        constraints = [
            models.UniqueConstraint(
                fields=["provider", "gpu", "gpus_per_instance"], name="hourly_rate_unique"
            )
        ]

    def __str__(self) -> str:
        return f"{self.provider} {self.gpu}: {self.rate_per_gpu_hour} {self.currency}/GPU-h"
