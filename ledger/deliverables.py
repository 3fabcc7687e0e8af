"""Submitting a deliverable: the server runs its own checks and records the verdict.

The verdict comes from the pure `checks.check_deliverable`; this module only gathers what the
checks need (the run's status) and stores the deliverable with its files in one transaction.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction

from campaigns.models import Campaign, Run, RunStatus

from .checks import FileEntry, check_deliverable
from .models import Deliverable, DeliverableFile


@transaction.atomic
def submit_deliverable(
    campaign: Campaign,
    *,
    kind: str,
    corpus_name: str,
    corpus_revision: str,
    files: Iterable[dict[str, Any]],
    run_id: str | None = None,
    expected_ids_ok: bool | None = None,
    reload_verified: bool | None = None,
    base_revision: str = "",
    user: Any = None,
) -> Deliverable:
    """Check and store a deliverable; it is kept (rejected or accepted) either way."""
    run = None
    if run_id:
        # Only a run of this campaign (hence of its team) can back a deliverable of it.
        run = Run.objects.filter(campaign=campaign, run_id=run_id).first()
        if run is None:
            raise ValidationError({"run": f"no run {run_id!r} in this campaign"})
    listed = [FileEntry(f["path"], int(f["size_bytes"]), f["sha256"]) for f in files]
    reasons = check_deliverable(
        kind,  # type: ignore[arg-type]  # the serializer restricts it to DeliverableKind
        listed,
        expected_ids_ok,
        reload_verified,
        base_revision,
        run_stopped=run is not None and run.status == RunStatus.STOPPED,
        run_id=run.run_id if run else None,
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
        submitted_by=user if getattr(user, "pk", None) else None,
    )
    DeliverableFile.objects.bulk_create(
        DeliverableFile(
            deliverable=deliverable, path=f.path, size_bytes=f.size_bytes, sha256=f.sha256
        )
        for f in listed
    )
    return deliverable
