"""Sharing a closing report with someone outside the team (docs/domain.md §16.4): a signed,
expiring, revocable read-only link. The token is ``django.core.signing`` over the share's id
and nonce (salted for this use), so it cannot be guessed or altered; whether it is revoked or
expired is read from its row on every open (ledger/selectors/report_shares.py)."""

from __future__ import annotations

import secrets
from datetime import timedelta

from django.contrib.auth.models import AnonymousUser, User
from django.core import signing
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from ledger.models import Report, ReportShare, ReportStatus
from ledger.selectors.report_shares import SALT

MAX_DAYS = 90


def token_of(share: ReportShare) -> str:
    return signing.dumps({"share": share.pk, "nonce": share.nonce}, salt=SALT)


@transaction.atomic
def share_report(
    *, report: Report, acting_user: User | AnonymousUser | None, days: int, note: str = ""
) -> tuple[ReportShare, str]:
    """A link to ``report`` good for ``days`` (1 to MAX_DAYS); returns the share and its token.
    Only a ready report is shared."""
    if report.status != ReportStatus.READY:
        raise ValidationError({"report": "only a ready report can be shared"})
    if isinstance(days, bool) or not isinstance(days, int) or not 1 <= days <= MAX_DAYS:
        raise ValidationError({"days": f"a whole number of days from 1 to {MAX_DAYS}"})
    share = ReportShare.objects.create(
        report=report,
        note=note.strip()[:200],
        nonce=secrets.token_hex(16),
        created_by=_person(acting_user),
        expires_at=timezone.now() + timedelta(days=days),
    )
    return share, token_of(share)


@transaction.atomic
def revoke_share(*, share: ReportShare, acting_user: User | AnonymousUser | None) -> ReportShare:
    """Revoke the link from now on (revoking twice keeps the first revocation)."""
    locked = ReportShare.objects.select_for_update().get(pk=share.pk)
    if locked.revoked_at is None:
        locked.revoked_at = timezone.now()
        locked.revoked_by = _person(acting_user)
        locked.save(update_fields=["revoked_at", "revoked_by"])
    return locked


def _person(user: User | AnonymousUser | None) -> User | None:
    return user if isinstance(user, User) else None
