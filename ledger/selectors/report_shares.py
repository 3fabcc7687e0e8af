"""Opening a shared report's link (docs/domain.md §16.4): the signature first, then the share's
row, read on every open, so a revocation or the expiry takes effect at once."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.core import signing

from ledger.models import ReportShare, ReportStatus

# The signing salt of share tokens (ledger/services/report_shares.py signs them).
SALT = "ledger.report-share"


@dataclass(frozen=True)
class Opened:
    share: ReportShare | None
    refusal: str  # "" when the link opens; else why not, in words


def open_share(token: str, now: datetime) -> Opened:
    try:
        payload = signing.loads(token, salt=SALT)
    except signing.BadSignature:
        return Opened(None, "This link is not valid.")
    if not isinstance(payload, dict) or not isinstance(payload.get("share"), int):
        return Opened(None, "This link is not valid.")
    share = (
        ReportShare.objects.select_related("report", "report__campaign", "created_by")
        .filter(pk=payload["share"], nonce=str(payload.get("nonce")))
        .first()
    )
    if share is None:
        return Opened(None, "This link is not valid.")
    if share.revoked_at is not None:
        return Opened(share, "This link was revoked by the team that shared it.")
    if share.expires_at <= now:
        return Opened(share, "This link has expired.")
    if share.report.status != ReportStatus.READY:
        return Opened(share, "This report is no longer available.")
    return Opened(share, "")
