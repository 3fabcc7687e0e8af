"""Ledger entries as FinOps FOCUS rows (pure: no Django, no I/O; docs/exports.md).

One row per ledger entry posted in the billing period (a month or a quarter, UTC). The FOCUS
columns are those of FOCUS 1.0 (`FOCUS_COLUMNS`), plus this project's own ``x_`` columns
(FOCUS allows custom columns so prefixed) that keep the ledger's distinctions:

- ``x_LedgerKind``: ``rental``, ``included`` or ``external``: external costs are kept apart as
  the ledger keeps them (§12): a reader sums ``BilledCost`` where ``x_LedgerKind`` is not
  ``external`` to get the campaign's incurred cost;
- a reversal is its own row with the negated cost, ``ChargeClass`` ``Correction`` and
  ``x_Reverses`` naming the entry it undoes (entries are append-only: nothing is rewritten).

Mapping (docs/exports.md has the table): a reserved lot is a ``Purchase`` (``One-Time``, paid
up front) of ``Compute``; a finished hourly run's rental is ``Usage`` (``Usage-Based``) of
``Compute`` with its GPU-hours as ``ConsumedQuantity``; an included expense or an external cost
is a ``Purchase`` (``One-Time``) of ``Other``. No discounts: ``BilledCost`` = ``EffectiveCost`` =
``ListCost`` = ``ContractedCost`` = the entry's amount.

Units: money ``Decimal`` in ``BillingCurrency`` (the entry's own currency, 0.01); datetimes
timezone-aware UTC, ISO 8601; a charge's period is the UTC day it was posted ``[day, day+1)``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, time, timedelta
from decimal import Decimal
from typing import Any, Final

FOCUS_VERSION: Final = "1.0"

# FOCUS 1.0 (FinOps Foundation, 2024-06): the specification's columns, in its order.
FOCUS_COLUMNS: Final = (
    "AvailabilityZone",
    "BilledCost",
    "BillingAccountId",
    "BillingAccountName",
    "BillingCurrency",
    "BillingPeriodEnd",
    "BillingPeriodStart",
    "ChargeCategory",
    "ChargeClass",
    "ChargeDescription",
    "ChargeFrequency",
    "ChargePeriodEnd",
    "ChargePeriodStart",
    "CommitmentDiscountCategory",
    "CommitmentDiscountId",
    "CommitmentDiscountName",
    "CommitmentDiscountStatus",
    "CommitmentDiscountType",
    "ConsumedQuantity",
    "ConsumedUnit",
    "ContractedCost",
    "ContractedUnitPrice",
    "EffectiveCost",
    "InvoiceIssuerName",
    "ListCost",
    "ListUnitPrice",
    "PricingCategory",
    "PricingQuantity",
    "PricingUnit",
    "ProviderName",
    "PublisherName",
    "RegionId",
    "RegionName",
    "ResourceId",
    "ResourceName",
    "ResourceType",
    "ServiceCategory",
    "ServiceName",
    "SkuId",
    "SkuPriceId",
    "SubAccountId",
    "SubAccountName",
    "Tags",
)
EXTRA_COLUMNS: Final = ("x_LedgerKind", "x_LedgerEntryId", "x_Reverses", "x_CampaignId")
COLUMNS: Final = FOCUS_COLUMNS + EXTRA_COLUMNS
# Columns that hold numbers (Parquet decimal / CSV plain decimal); the rest are text or times.
DECIMAL_COLUMNS: Final = frozenset(
    {
        "BilledCost",
        "EffectiveCost",
        "ListCost",
        "ContractedCost",
        "ConsumedQuantity",
        "PricingQuantity",
        "ListUnitPrice",
        "ContractedUnitPrice",
    }
)
TIME_COLUMNS: Final = frozenset(
    {"BillingPeriodStart", "BillingPeriodEnd", "ChargePeriodStart", "ChargePeriodEnd"}
)
SERVICE_PROVIDER: Final = "Campaign Desk"


@dataclass(frozen=True)
class EntryFacts:
    """One ledger entry with what it posts: a lot (provider, plan, quantity, GPU-hours) or a
    run (run id, GPU-hours), or neither."""

    id: int
    kind: str
    description: str
    amount: Decimal
    currency: str
    created_at: datetime
    campaign_id: int
    campaign_title: str
    team_id: int
    team_name: str
    reverses: int | None = None
    lot_id: int | None = None
    lot_provider: str = ""
    lot_plan: str = ""
    lot_quantity: int | None = None
    lot_gpu_hours: Decimal | None = None
    run_id: str = ""
    run_gpu_hours: Decimal | None = None
    gpu_model: str = ""


def iso(moment: datetime) -> str:
    """A UTC time as FOCUS writes it: ISO 8601 with a Z."""
    return moment.isoformat().replace("+00:00", "Z")


def text_cell(value: Any) -> str:
    """A cell as CSV writes it: "" for null, ISO for times, the plain decimal for money."""
    if value is None:
        return ""
    if isinstance(value, datetime):
        return iso(value)
    return str(value)


def _nature(e: EntryFacts) -> tuple[str, str, str, str, str]:
    """ChargeCategory, ChargeFrequency, ServiceCategory, ServiceName, ResourceType."""
    if e.kind == "rental" and e.run_id:
        return "Usage", "Usage-Based", "Compute", "GPU rental (hourly)", "Training run"
    if e.kind == "rental":
        return "Purchase", "One-Time", "Compute", "GPU rental (reserved lot)", "GPU lot"
    if e.kind == "included":
        return "Purchase", "One-Time", "Other", "Included expense", "Campaign"
    return "Purchase", "One-Time", "Other", "External cost", "Campaign"


def _resource(e: EntryFacts) -> tuple[str, str]:
    base = f"campaign/{e.campaign_id}"
    if e.lot_id is not None:
        return f"{base}/lot/{e.lot_id}", f"{e.campaign_title}: {e.lot_plan}"
    if e.run_id:
        return f"{base}/run/{e.run_id}", f"{e.campaign_title}: run {e.run_id}"
    return base, e.campaign_title


def _pricing_quantity(e: EntryFacts, gpu_hours: Decimal | None, sign: int) -> Decimal | None:
    if e.lot_quantity:
        return Decimal(sign * e.lot_quantity)
    return None if gpu_hours is None else sign * gpu_hours


def focus_row(
    e: EntryFacts, billing: tuple[datetime, datetime], original: EntryFacts | None = None
) -> dict[str, Any]:
    """The entry as one FOCUS row (every column of `COLUMNS`; None where FOCUS allows null).
    A reversal takes the nature of the entry it undoes (`original`, when known)."""
    nature_of = original or e
    category, frequency, service_category, service_name, resource_type = _nature(nature_of)
    resource_id, resource_name = _resource(nature_of)
    day = datetime.combine(e.created_at.date(), time(0), tzinfo=e.created_at.tzinfo)
    quantity = nature_of.lot_gpu_hours if nature_of.lot_id else nature_of.run_gpu_hours
    sign = -1 if e.reverses is not None else 1
    provider = nature_of.lot_provider or SERVICE_PROVIDER
    row: dict[str, Any] = dict.fromkeys(COLUMNS)
    row.update(
        BilledCost=e.amount,
        EffectiveCost=e.amount,
        ListCost=e.amount,
        ContractedCost=e.amount,
        BillingAccountId=str(e.team_id),
        BillingAccountName=e.team_name,
        BillingCurrency=e.currency,
        BillingPeriodStart=billing[0],
        BillingPeriodEnd=billing[1],
        ChargePeriodStart=day,
        ChargePeriodEnd=day + timedelta(days=1),
        ChargeCategory=category,
        ChargeClass="Correction" if e.reverses is not None else None,
        ChargeDescription=e.description,
        ChargeFrequency=frequency,
        ConsumedQuantity=None if quantity is None else sign * quantity,
        ConsumedUnit=None if quantity is None else "GPU-Hours",
        PricingCategory="Standard",
        PricingQuantity=_pricing_quantity(nature_of, quantity, sign),
        PricingUnit="Lots" if nature_of.lot_quantity else ("GPU-Hours" if quantity else None),
        InvoiceIssuerName=provider,
        ProviderName=provider,
        PublisherName=provider,
        ResourceId=resource_id,
        ResourceName=resource_name,
        ResourceType=resource_type,
        ServiceCategory=service_category,
        ServiceName=service_name,
        SkuId=nature_of.lot_plan or None,
        SubAccountId=str(e.campaign_id),
        SubAccountName=e.campaign_title,
        Tags=json.dumps(
            {
                "team": e.team_name,
                "campaign": str(e.campaign_id),
                "ledger_kind": e.kind,
                **({"gpu_model": nature_of.gpu_model} if nature_of.gpu_model else {}),
            },
            sort_keys=True,
        ),
        x_LedgerKind=e.kind,
        x_LedgerEntryId=str(e.id),
        x_Reverses=None if e.reverses is None else str(e.reverses),
        x_CampaignId=str(e.campaign_id),
    )
    return row
