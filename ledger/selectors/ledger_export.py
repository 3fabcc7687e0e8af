"""Reading a team's ledger for the FOCUS export (docs/exports.md): the entries posted in one
billing period, streamed from the database in chunks (`.iterator(chunk_size=…)`), each as the
facts `ledger.domain.focus_export` maps, then the reserved lots whose window overlaps the
period (their amortised use). Two queries, whatever the number of entries; memory bounded by
the chunk."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import date, datetime, timedelta
from decimal import Decimal
from typing import Any

from ledger.domain import focus_export, team_budget
from ledger.models import LedgerEntry

CHUNK = 5000

_OWN = (
    "id",
    "kind",
    "description",
    "amount",
    "currency",
    "created_at",
    "reverses_id",
    "campaign_id",
    "campaign__title",
    "campaign__team_id",
    "campaign__team__name",
)
# What the entry posts (a lot or a run); the same again for a reversal's original.
_POSTS = (
    "reservation_id",
    "reservation__plan__provider",
    "reservation__plan__name",
    "reservation__quantity",
    "reservation__plan__gpus_per_lot",
    "reservation__plan__duration_hours",
    "reservation__plan__gpu__name",
    "run__run_id",
    "run__gpus",
    "run__observed_hours",
    "run__variant__gpu",
)
FIELDS = _OWN + _POSTS + tuple(f"reverses__{f}" for f in ("kind", "created_at", *_POSTS))


def _posts(row: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    def get(name: str) -> Any:
        return row[prefix + name]

    lot_hours = None
    if get("reservation_id") is not None:
        lot_hours = (
            get("reservation__plan__duration_hours")
            * get("reservation__plan__gpus_per_lot")
            * get("reservation__quantity")
        )
    run_hours = None
    if get("run__run_id") and get("run__observed_hours") is not None:
        run_hours = Decimal(get("run__observed_hours")) * get("run__gpus")
    return {
        "lot_id": get("reservation_id"),
        "lot_provider": get("reservation__plan__provider") or "",
        "lot_plan": get("reservation__plan__name") or "",
        "lot_quantity": get("reservation__quantity"),
        "lot_gpu_hours": lot_hours,
        "run_id": get("run__run_id") or "",
        "run_gpu_hours": run_hours,
        "gpu_model": get("reservation__plan__gpu__name") or get("run__variant__gpu") or "",
    }


def _facts(row: dict[str, Any]) -> tuple[focus_export.EntryFacts, focus_export.EntryFacts | None]:
    own = {
        "id": row["id"],
        "kind": row["kind"],
        "description": row["description"],
        "amount": row["amount"],
        "currency": row["currency"],
        "created_at": row["created_at"],
        "campaign_id": row["campaign_id"],
        "campaign_title": row["campaign__title"],
        "team_id": row["campaign__team_id"],
        "team_name": row["campaign__team__name"],
    }
    entry = focus_export.EntryFacts(**own, reverses=row["reverses_id"], **_posts(row))
    original = None
    if row["reverses_id"] is not None:
        original = focus_export.EntryFacts(
            **{**own, "kind": row["reverses__kind"], "created_at": row["reverses__created_at"]},
            **_posts(row, "reverses__"),
        )
    return entry, original


def billing_period(kind: team_budget.PeriodKind, start: date) -> tuple[datetime, datetime]:
    return team_budget.period_bounds(kind, start)


def export_rows(
    team_id: int, kind: team_budget.PeriodKind, start: date, *, chunk_size: int = CHUNK
) -> Iterator[dict[str, Any]]:
    """The FOCUS rows of the team's entries posted in the period, in posting order."""
    billing = billing_period(kind, start)
    rows = (
        LedgerEntry.objects.filter(
            campaign__team_id=team_id, created_at__gte=billing[0], created_at__lt=billing[1]
        )
        .order_by("id")
        .values(*FIELDS)
    )
    for row in rows.iterator(chunk_size=chunk_size):
        entry, original = _facts(row)
        yield focus_export.focus_row(entry, billing, original)
    for lot in lots_in(team_id, billing):
        yield from focus_export.amortised_rows(lot, billing)


def lots_in(team_id: int, billing: tuple[datetime, datetime]) -> Iterator[focus_export.LotFacts]:
    """The team's lots bought through the ledger (a rental entry posting them, not reversed)
    whose window overlaps the billing period."""
    entries = (
        LedgerEntry.objects.filter(
            campaign__team_id=team_id, reservation__isnull=False, reversed_by__isnull=True
        )
        .select_related("campaign__team", "reservation__plan__gpu")
        .order_by("id")
    )
    for entry in entries.iterator(chunk_size=CHUNK):
        lot = entry.reservation
        start = lot.start if lot is not None else None
        start = start or entry.campaign.committed_at or entry.created_at
        if lot is None or start >= billing[1]:
            continue
        plan = lot.plan
        end = start + timedelta(hours=float(plan.duration_hours))
        if end <= billing[0]:
            continue
        yield focus_export.LotFacts(
            lot_id=lot.pk, entry_id=entry.pk, campaign_id=entry.campaign_id,
            campaign_title=entry.campaign.title, team_id=team_id,
            team_name=entry.campaign.team.name, provider=plan.provider, plan=plan.name,
            quantity=lot.quantity,
            gpu_hours=Decimal(plan.duration_hours) * plan.gpus_per_lot * lot.quantity,
            price=entry.amount, currency=entry.currency, start=start, end=end,
            gpu_model=plan.gpu.name if plan.gpu_id else "",
        )  # fmt: skip
