"""Ledger entries and prepaid lots as FinOps FOCUS 1.2 rows (pure: no Django, no I/O;
docs/exports.md, which has the mapping table and the rules below with their reasons).

- An entry posted in the billing period is one row. A reserved lot's rental entry is the
  lot's **purchase** (`Purchase`, `One-Time`, `BilledCost` its price, `EffectiveCost` 0: the
  money is spread over the lot's use); an hourly run's rental entry is **usage** (`Usage`,
  `Usage-Based`, its GPU-hours consumed); an included or external cost is a purchase of `Other`.
- A reserved lot is also **amortised**: one `Usage` row per UTC day of its window inside the
  billing period, `BilledCost` 0 and `EffectiveCost` its share of the price (the day's hours ÷
  the lot's hours), `CommitmentDiscountId` the lot, status `Used` (the rented machine is the
  team's for the whole window). A lot whose purchase was reversed is not amortised.
- A reversal is its own row with the negated money; `ChargeClass` is `Correction` only when the
  entry it undoes was posted before the billing period (FOCUS: a correction of a previous
  period's charge); a reversal in the same period is a plain negative charge.
- `ConsumedQuantity`/`ConsumedUnit` only on `Usage` rows; prices and SKUs on every
  `Usage`/`Purchase` row; tags carry the `campaigndesk/` provider prefix.

Units: money `Decimal` in `BillingCurrency` (the entry's own currency); unit prices to
`UNIT_PRICE`, quantities to `QUANTITY`, so that a cost is exactly unit price × quantity;
datetimes timezone-aware UTC; a charge's period is a UTC day `[day, day + 1)`.
"""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, time, timedelta
from decimal import Decimal
from typing import Any, Final

FOCUS_VERSION: Final = "1.2"

# FOCUS 1.2 (FinOps Foundation, 2025-05): the specification's columns, in its order.
FOCUS_COLUMNS: Final = (
    "AvailabilityZone", "BilledCost", "BillingAccountId", "BillingAccountName",
    "BillingAccountType", "BillingCurrency", "BillingPeriodEnd", "BillingPeriodStart",
    "CapacityReservationId", "CapacityReservationStatus", "ChargeCategory", "ChargeClass",
    "ChargeDescription", "ChargeFrequency", "ChargePeriodEnd", "ChargePeriodStart",
    "CommitmentDiscountCategory", "CommitmentDiscountId", "CommitmentDiscountName",
    "CommitmentDiscountQuantity", "CommitmentDiscountStatus", "CommitmentDiscountType",
    "CommitmentDiscountUnit", "ConsumedQuantity", "ConsumedUnit", "ContractedCost",
    "ContractedUnitPrice", "EffectiveCost", "InvoiceId", "InvoiceIssuerName", "ListCost",
    "ListUnitPrice", "PricingCategory", "PricingCurrency", "PricingCurrencyContractedUnitPrice",
    "PricingCurrencyEffectiveCost", "PricingCurrencyListUnitPrice", "PricingQuantity",
    "PricingUnit", "ProviderName", "PublisherName", "RegionId", "RegionName", "ResourceId",
    "ResourceName", "ResourceType", "ServiceCategory", "ServiceName", "ServiceSubcategory",
    "SkuId", "SkuMeter", "SkuPriceDetails", "SkuPriceId", "SubAccountId", "SubAccountName",
    "SubAccountType", "Tags",
)  # fmt: skip
EXTRA_COLUMNS: Final = ("x_LedgerKind", "x_LedgerEntryId", "x_Reverses", "x_CampaignId")
COLUMNS: Final = FOCUS_COLUMNS + EXTRA_COLUMNS
DECIMAL_COLUMNS: Final = frozenset(
    {
        "BilledCost", "EffectiveCost", "ListCost", "ContractedCost", "ConsumedQuantity",
        "PricingQuantity", "ListUnitPrice", "ContractedUnitPrice", "CommitmentDiscountQuantity",
        "PricingCurrencyContractedUnitPrice", "PricingCurrencyEffectiveCost",
        "PricingCurrencyListUnitPrice",
    }
)  # fmt: skip
TIME_COLUMNS: Final = frozenset(
    {"BillingPeriodStart", "BillingPeriodEnd", "ChargePeriodStart", "ChargePeriodEnd"}
)
SERVICE_PROVIDER: Final = "Campaign Desk"
TAG_PREFIX: Final = "campaigndesk/"
UNIT_PRICE: Final = Decimal("0.000001")
QUANTITY: Final = Decimal("0.0001")
GPU_HOURS: Final = "GPU-Hours"


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


@dataclass(frozen=True)
class LotFacts:
    """A reserved lot whose purchase is in the ledger: its window and what it cost."""

    lot_id: int
    entry_id: int
    campaign_id: int
    campaign_title: str
    team_id: int
    team_name: str
    provider: str
    plan: str
    quantity: int
    gpu_hours: Decimal  # quantity × GPUs per lot × hours
    price: Decimal
    currency: str
    start: datetime
    end: datetime
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
    # An expense is a service consumed once (storage, annotation), not a prepayment of later
    # charges: one-time usage (a purchase would need an effective cost of 0, FOCUS 1.2).
    if e.kind == "included":
        return "Usage", "One-Time", "Other", "Included expense", "Campaign"
    return "Usage", "One-Time", "Other", "External cost", "Campaign"


def _resource(e: EntryFacts) -> tuple[str, str]:
    base = f"campaign/{e.campaign_id}"
    if e.lot_id is not None:
        return f"{base}/lot/{e.lot_id}", f"{e.campaign_title}: {e.lot_plan}"
    if e.run_id:
        return f"{base}/run/{e.run_id}", f"{e.campaign_title}: run {e.run_id}"
    return base, e.campaign_title


def tags(team: str, campaign_id: int, kind: str, gpu_model: str) -> str:
    found = {"team": team, "campaign": str(campaign_id), "ledger_kind": kind}
    if gpu_model:
        found["gpu_model"] = gpu_model
    return json.dumps({TAG_PREFIX + k: v for k, v in found.items()}, sort_keys=True)


def ascii_text(text: str) -> str:
    """FOCUS 1.2's string handling as focus-validator checks it (ASCII only): accents folded
    (é → e), × as x, any other character as \\uXXXX, so nothing is silently dropped."""
    folded = unicodedata.normalize("NFKD", text.replace("×", "x"))
    kept = (c for c in folded if not unicodedata.combining(c))
    return "".join(c if c.isascii() else f"\\u{ord(c):04x}" for c in kept)


def invoice_id(team_id: int, billing: tuple[datetime, datetime]) -> str:
    """The period's statement is the team's provisional invoice."""
    return f"team/{team_id}/{billing[0]:%Y-%m-%d}..{billing[1]:%Y-%m-%d}"


def _account(team_id: int, team: str, campaign_id: int, campaign: str) -> dict[str, Any]:
    return {
        "BillingAccountId": f"team/{team_id}",
        "BillingAccountName": team,
        "BillingAccountType": "Team",
        "SubAccountId": f"campaign/{campaign_id}",
        "SubAccountName": campaign,
        "SubAccountType": "Campaign",
        "x_CampaignId": str(campaign_id),
    }


def _day(moment: datetime) -> datetime:
    return datetime.combine(moment.date(), time(0), tzinfo=moment.tzinfo)


def _prices(e: EntryFacts, nature: EntryFacts, sign: int) -> dict[str, Any]:
    """Unit price, quantity and SKU of the entry: the lots bought, the run's GPU-hours, or one
    unit of an expense; unit price × quantity = the entry's amount."""
    if nature.lot_id is not None and nature.lot_quantity:
        quantity, unit, sku = Decimal(nature.lot_quantity), "Lots", nature.lot_plan
    elif nature.run_id and nature.run_gpu_hours:
        quantity, unit, sku = nature.run_gpu_hours.quantize(QUANTITY), GPU_HOURS, "gpu-hour"
    else:
        quantity, unit, sku = Decimal(1), "Units", f"{nature.kind}-expense"
    price = abs(e.amount) / quantity if quantity else abs(e.amount)
    return {
        "ListUnitPrice": price,
        "ContractedUnitPrice": price,
        "PricingQuantity": sign * quantity,
        "PricingUnit": unit,
        "PricingCategory": "Standard",
        "SkuId": sku,
        "SkuPriceId": f"{sku}:{price}",
    }


def _consumed(nature: EntryFacts, category: str, sign: int) -> dict[str, Any]:
    if category != "Usage":
        return {}
    if nature.run_gpu_hours is None:
        return {"ConsumedQuantity": Decimal(sign), "ConsumedUnit": "Units"}
    return {"ConsumedQuantity": sign * nature.run_gpu_hours, "ConsumedUnit": GPU_HOURS}


def _commitment(nature: EntryFacts) -> dict[str, Any]:
    if nature.lot_id is None:
        return {}
    return {
        "CommitmentDiscountId": f"campaign/{nature.campaign_id}/lot/{nature.lot_id}",
        "CommitmentDiscountName": nature.lot_plan,
        "CommitmentDiscountCategory": "Usage",
        "CommitmentDiscountType": "Prepaid GPU lot",
        "CommitmentDiscountQuantity": nature.lot_gpu_hours,
        "CommitmentDiscountUnit": GPU_HOURS,
    }


def focus_row(
    e: EntryFacts, billing: tuple[datetime, datetime], original: EntryFacts | None = None
) -> dict[str, Any]:
    """The entry as one FOCUS row (every column of `COLUMNS`; None where FOCUS allows null). A
    reversal takes the nature of the entry it undoes (`original`, when known)."""
    nature = original or e
    category, frequency, service_category, service_name, resource_type = _nature(nature)
    resource_id, resource_name = _resource(nature)
    sign = -1 if e.reverses is not None else 1
    provider = nature.lot_provider or SERVICE_PROVIDER
    earlier = original is not None and original.created_at < billing[0]
    purchase_of_lot = nature.lot_id is not None and category == "Purchase"
    row: dict[str, Any] = dict.fromkeys(COLUMNS)
    row.update(
        _account(e.team_id, e.team_name, e.campaign_id, e.campaign_title),
        **_prices(e, nature, sign), **_consumed(nature, category, sign), **_commitment(nature),
        BilledCost=e.amount, ListCost=e.amount, ContractedCost=e.amount,
        # A prepaid lot's money is effective as it is used: its amortised rows carry it.
        EffectiveCost=Decimal("0.00") if purchase_of_lot else e.amount,
        BillingCurrency=e.currency, BillingPeriodStart=billing[0], BillingPeriodEnd=billing[1],
        ChargePeriodStart=_day(e.created_at), ChargePeriodEnd=_day(e.created_at) + timedelta(1),
        ChargeCategory=category, ChargeClass="Correction" if earlier else None,
        ChargeDescription=e.description, ChargeFrequency=frequency,
        InvoiceIssuerName=provider, ProviderName=provider, PublisherName=provider,
        ResourceId=resource_id, ResourceName=resource_name, ResourceType=resource_type,
        ServiceCategory=service_category, ServiceName=service_name,
        ServiceSubcategory=f"Other ({service_category})",
        Tags=tags(e.team_name, e.campaign_id, e.kind, nature.gpu_model),
        InvoiceId=invoice_id(e.team_id, billing),
        x_LedgerKind=e.kind, x_LedgerEntryId=str(e.id),
        x_Reverses=None if e.reverses is None else str(e.reverses),
    )  # fmt: skip
    return as_ascii(row)


def as_ascii(row: dict[str, Any]) -> dict[str, Any]:
    """Every FOCUS text column ASCII (`ascii_text`); the x_ columns keep the text as stored."""
    for column in FOCUS_COLUMNS:
        if isinstance(row[column], str):
            row[column] = ascii_text(row[column])
    return row


def lot_days(
    lot: LotFacts, billing: tuple[datetime, datetime]
) -> Iterator[tuple[datetime, Decimal]]:
    """Each UTC day of the lot's window inside the billing period, with the hours of the
    window that fall in it."""
    start, end = max(lot.start, billing[0]), min(lot.end, billing[1])
    day = _day(start)
    while day < end:
        covered = min(end, day + timedelta(days=1)) - max(start, day)
        yield day, Decimal(int(covered.total_seconds())) / 3600
        day += timedelta(days=1)


def amortised_rows(lot: LotFacts, billing: tuple[datetime, datetime]) -> Iterator[dict[str, Any]]:
    """The lot's use, day by day: `Usage` rows billed 0 whose effective cost is the day's share
    of the price (unit price per GPU-hour × the day's GPU-hours)."""
    hours = Decimal(int((lot.end - lot.start).total_seconds())) / 3600
    unit = (lot.price / lot.gpu_hours).quantize(UNIT_PRICE)
    nature = EntryFacts(
        id=lot.entry_id, kind="rental", description="", amount=lot.price, currency=lot.currency,
        created_at=lot.start, campaign_id=lot.campaign_id, campaign_title=lot.campaign_title,
        team_id=lot.team_id, team_name=lot.team_name, lot_id=lot.lot_id,
        lot_provider=lot.provider, lot_plan=lot.plan, lot_quantity=lot.quantity,
        lot_gpu_hours=lot.gpu_hours, gpu_model=lot.gpu_model,
    )  # fmt: skip
    for day, day_hours in lot_days(lot, billing):
        quantity = (lot.gpu_hours * day_hours / hours).quantize(QUANTITY)
        cost = unit * quantity
        row = focus_row(nature, billing)
        row.update(
            BilledCost=Decimal("0.00"), EffectiveCost=cost, ListCost=cost, ContractedCost=cost,
            ListUnitPrice=unit, ContractedUnitPrice=unit, PricingQuantity=quantity,
            PricingUnit=GPU_HOURS, PricingCategory="Committed", SkuId="gpu-hour",
            SkuPriceId=f"gpu-hour:{unit}", ConsumedQuantity=quantity, ConsumedUnit=GPU_HOURS,
            ChargeCategory="Usage", ChargeFrequency="Usage-Based",
            CommitmentDiscountStatus="Used", ChargePeriodStart=day,
            ChargePeriodEnd=day + timedelta(days=1),
            ChargeDescription=ascii_text(f"{lot.plan}: amortised use of the prepaid lot"),
        )  # fmt: skip
        yield row
