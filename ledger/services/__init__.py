"""The write path of the ledger: one function per domain action (docs/domain.md §12-§14).

Entries are append-only (the model refuses updates and deletes, PostgreSQL's trigger too). A
correction is a reversal: a new entry of the same kind and currency, with the negated amount,
pointing at the entry it undoes. An entry is reversed at most once (the one-to-one `reverses`
column makes the database refuse a second reversal even under a race) and a reversal is never
reversed itself: to restore an amount, post it again. Ledger entries are still taken after a
campaign is closed (late invoices, reversals); deliverables are not.

The admin and the API both call these functions; forms call the `check_*` functions to show a
refusal beside its field before anything is written.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from decimal import Decimal
from typing import Any

from celery import current_app
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.db.models import Sum

from campaigns.domain.formatting import format_hours, format_money
from campaigns.models import Campaign, Run, RunStatus
from campaigns.selectors import run_cost
from estimates import services as estimate_services
from ledger.domain.deliverable_checks import FileEntry, check_deliverable
from ledger.models import Deliverable, DeliverableFile, EntryKind, LedgerEntry, Report

# --- Entries ---------------------------------------------------------------------------------

logger = logging.getLogger(__name__)


def check_entry(
    campaign: Campaign, *, kind: str, description: str, amount: Any, currency: str
) -> None:
    """Refuse (ValidationError naming the field) what `post_entry` would not append."""
    if kind not in EntryKind.values:
        raise ValidationError({"kind": f"expected one of {', '.join(EntryKind.values)}"})
    if not (description or "").strip():
        raise ValidationError({"description": "say what the money paid for"})
    if not isinstance(amount, Decimal) or not amount.is_finite():
        raise ValidationError({"amount": "an exact, finite decimal amount is required"})
    if amount < 0:
        raise ValidationError(
            {"amount": "a negative amount is a correction: post a reversal of the entry instead"}
        )
    if currency != campaign.currency:
        raise ValidationError(
            {
                "currency": (
                    f"this campaign's ledger is in {campaign.currency}; an amount in {currency} "
                    "is never summed with it"
                )
            }
        )


def check_reversal(original: LedgerEntry) -> None:
    """Refuse reversing a reversal, or an entry already reversed."""
    if original.reverses_id is not None:
        raise ValidationError(
            {
                "reverses": (
                    f"entry #{original.pk} is itself a reversal (of #{original.reverses_id}) and "
                    "is never reversed: post the original amount again instead"
                )
            }
        )
    already = LedgerEntry.objects.filter(reverses_id=original.pk).values_list("pk", flat=True)
    if already:
        raise ValidationError(
            {"reverses": f"entry #{original.pk} is already reversed by entry #{already[0]}"}
        )


@transaction.atomic
def post_entry(
    *,
    campaign: Campaign,
    kind: str,
    description: str,
    amount: Decimal,
    currency: str,
    acting_user: User | None = None,
) -> LedgerEntry:
    """Append one entry in the campaign's currency. Negative amounts are corrections: refused."""
    check_entry(campaign, kind=kind, description=description, amount=amount, currency=currency)
    return LedgerEntry.objects.create(
        campaign=campaign,
        kind=kind,
        description=description.strip(),
        amount=amount,
        currency=currency,
        created_by=acting_user,
    )


@transaction.atomic
def reverse_entry(
    *,
    campaign: Campaign,
    entry_id: int,
    description: str = "",
    expected: dict[str, Any] | None = None,
    acting_user: User | None = None,
) -> LedgerEntry:
    """Append the reversal of entry `entry_id` of this campaign.

    `expected` holds what the caller stated about the reversal (kind, amount, currency); each
    must agree with what the reversal will be, so a client never gets another amount than it sent.
    """
    # The lock serializes two concurrent reversals of one entry; the unique `reverses` column
    # is the last word if the lock is bypassed.
    original = (
        LedgerEntry.objects.select_for_update().filter(campaign=campaign, pk=entry_id).first()
    )
    if original is None:
        raise ValidationError({"reverses": f"no entry #{entry_id} in this campaign's ledger"})
    check_reversal(original)
    amount = -original.amount
    expected = expected or {}
    errors = {}
    if expected.get("kind") not in (None, original.kind):
        errors["kind"] = f"a reversal keeps the kind of the entry it undoes ({original.kind})"
    if expected.get("currency") not in (None, original.currency):
        errors["currency"] = (
            f"a reversal keeps the currency of the entry it undoes ({original.currency})"
        )
    if expected.get("amount") is not None and expected["amount"] != amount:
        errors["amount"] = (
            f"a reversal negates the amount it undoes: {format_money(amount)}, "
            "or leave the amount out"
        )
    if errors:
        raise ValidationError(errors)
    text = description.strip() or f"Reversal of #{original.pk}: {original.description}"
    try:
        with transaction.atomic():
            return LedgerEntry.objects.create(
                campaign=campaign,
                kind=original.kind,
                description=text[:300],
                amount=amount,
                currency=original.currency,
                reverses=original,
                created_by=acting_user,
            )
    except IntegrityError as exc:
        raise ValidationError({"reverses": f"entry #{original.pk} is already reversed"}) from exc


@transaction.atomic
def post_reserved_lots(*, campaign: Campaign, acting_user: User | None = None) -> list[LedgerEntry]:
    """Post one rental entry per reserved lot; a lot already posted is not posted again."""
    entries = []
    for lot in campaign.lots.select_related("plan", "plan__gpu").filter(ledger_entry__isnull=True):
        entries.append(
            LedgerEntry.objects.create(
                campaign=campaign,
                kind=EntryKind.RENTAL,
                description=f"{lot.quantity} × {lot.plan.provider} {lot.plan.name}",
                amount=lot.total_price,
                currency=lot.plan.currency,
                reservation=lot,
                created_by=acting_user,
            )
        )
    return entries


@transaction.atomic
def post_run_cost(*, run: Run, acting_user: User | None = None) -> LedgerEntry | None:
    """Post a finished hourly run's cost as a rental entry, once per run segment
    (docs/domain.md §18).

    A lot-covered run posts nothing: its lot share is an allocation of the lot already posted.
    A resumed run (campaigns/services/run_lifecycle.py) posts each stretch when it ends: the
    run's cost so far less what its earlier entries posted. The unique (run, run_segment)
    makes the database refuse a second entry for the same stretch.
    """
    campaign = Campaign.objects.get(pk=run.campaign_id)
    prices = run_cost.pricing(campaign)
    gpu = run.variant.gpu if run.variant_id and run.variant else ""
    priced = run_cost.cost_of_run(run, prices, gpu=gpu)
    if priced is None or priced[1].basis != "hourly":
        return None
    segment = run.segments.count() + 1
    posted = list(LedgerEntry.objects.filter(run=run).values_list("run_segment", "amount"))
    if any(number >= segment for number, _amount in posted):
        return None
    total, rate = priced
    # Corrections of its hours adjusted its cost too (ledger/services/run_corrections.py).
    corrected = LedgerEntry.objects.filter(run_correction__run=run).aggregate(s=Sum("amount"))["s"]
    held = sum((a for _n, a in posted), corrected or Decimal(0))
    amount = max(total - held, Decimal(0))
    hours = run_cost.hours_of_run(run) - run.prior_hours
    stretch = f" (segment {segment})" if segment > 1 else ""
    try:
        with transaction.atomic():
            return LedgerEntry.objects.create(
                campaign=campaign,
                kind=EntryKind.RENTAL,
                description=(
                    f"Run {run.run_id}{stretch}: {format_hours(hours)} h × {run.gpus} GPU × "
                    f"{rate.per_gpu_hour:f} {campaign.currency}/GPU-hour"
                )[:300],
                amount=amount,
                currency=campaign.currency,
                run=run,
                run_segment=segment,
                created_by=acting_user,
            )
    except IntegrityError:
        return None


# --- Deliverables ----------------------------------------------------------------------------


def _backing_run(campaign: Campaign, run_id: str | None) -> Run | None:
    """The run named by the submission, if any; naming one outside the campaign is a 4xx on
    `run`, because only a run of this campaign (hence of its team) can back a deliverable of it."""
    if not run_id:
        return None
    run = Run.objects.filter(campaign=campaign, run_id=run_id).first()
    if run is None:
        raise ValidationError({"run": f"no run {run_id!r} in this campaign"})
    return run


def _run_artifacts(run: Run | None) -> dict[str, tuple[int, str]]:
    """The run's logged artifacts by path, with the size and digest the server recorded."""
    if run is None:
        return {}
    return {a.path: (a.size_bytes, a.sha256) for a in run.artifacts.all()}


def _file_entry(f: dict[str, Any], stored: dict[str, tuple[int, str]]) -> FileEntry:
    """One listed file. A file the run logged as an artifact may be named by its path alone: the
    server's own size and digest stand for it, and any that were sent must agree with them (the
    check compares them later). Any other file must carry both, or the 4xx names `files`."""
    if f.get("size_bytes") is None or f.get("sha256") is None:
        if f["path"] not in stored:
            raise ValidationError(
                {
                    "files": f"{f['path']}: size_bytes and sha256 are required unless the "
                    "path is one of the run's artifacts"
                }
            )
        size, digest = stored[f["path"]]
        f = {**f, "size_bytes": f.get("size_bytes", size), "sha256": f.get("sha256", digest)}
    return FileEntry(f["path"], int(f["size_bytes"]), f["sha256"])


@transaction.atomic
def submit_deliverable(
    *,
    campaign: Campaign,
    kind: str,
    corpus_name: str,
    corpus_revision: str,
    files: Iterable[dict[str, Any]],
    run_id: str | None = None,
    expected_ids_ok: bool | None = None,
    reload_verified: bool | None = None,
    base_revision: str = "",
    acting_user: User | None = None,
) -> Deliverable:
    """Check and store a deliverable; it is kept (rejected or accepted) either way, with its
    rejection reasons, so that a rejected submission stays on the record."""
    campaign.refuse_if_closed()
    run = _backing_run(campaign, run_id)
    stored = _run_artifacts(run)
    listed = [_file_entry(f, stored) for f in files]
    reasons = check_deliverable(
        kind,  # type: ignore[arg-type]  # the serializer restricts it to DeliverableKind
        listed,
        expected_ids_ok,
        reload_verified,
        base_revision,
        run_stopped=run is not None and run.status == RunStatus.STOPPED,
        run_id=run.run_id if run else None,
        artifacts=stored,
    )
    deliverable = Deliverable.objects.create(
        campaign=campaign,
        kind=kind,
        corpus_name=corpus_name,
        corpus_revision=corpus_revision,
        run=run,
        expected_ids_ok=expected_ids_ok,
        reload_verified=reload_verified,
        base_revision=base_revision or "",
        accepted=not reasons,
        rejection_reasons=list(reasons),
        submitted_by=acting_user,
    )
    DeliverableFile.objects.bulk_create(
        DeliverableFile(
            deliverable=deliverable, path=f.path, size_bytes=f.size_bytes, sha256=f.sha256
        )
        for f in listed
    )
    return deliverable


# --- Closing reports -------------------------------------------------------------------------


@transaction.atomic
def request_report(*, campaign: Campaign, acting_user: User | None = None) -> Report:
    """Record a pending closing report and enqueue its build after the transaction commits.

    The admin action "Generate closing report" and `POST /campaigns/{id}/reports/` both call
    this; the caller has already checked that `acting_user` may write to the campaign's team.
    """
    report = Report.objects.create(campaign=campaign, requested_by=acting_user)
    # On commit: a worker must find the row, and a rolled-back request enqueues nothing. A
    # broker outage leaves it pending for sweep_stale_reports, and the request succeeds.
    # By name: the task calls the services, so the services do not import it (no loop).
    current_app.tasks["ledger.build_closing_report"].delay_on_commit(report.pk)
    return report


# --- The next campaign (docs/domain.md §21) ------------------------------------------------------


def plan_next_campaign(*, campaign: Campaign, acting_user: User | None = None) -> Campaign:
    """A new draft planned from `campaign` (`estimates.services.clone_campaign`: same plan, hours
    calibrated), inheriting also the ledger's failed checks: each rejected deliverable's
    reasons. The API's clone and the admin action "Plan the next campaign from this one"."""
    failed = [
        {
            "kind": "failed_check",
            "subject": f"deliverable #{pk} ({kind}, {name}@{revision})",
            "text": "; ".join(str(r) for r in reasons or []) or "rejected",
        }
        for pk, kind, name, revision, reasons in Deliverable.objects.filter(
            campaign=campaign, accepted=False
        )
        .order_by("id")
        .values_list("id", "kind", "corpus_name", "corpus_revision", "rejection_reasons")
    ]
    return estimate_services.clone_campaign(
        campaign=campaign, acting_user=acting_user, extra_uncertainties=failed
    )
