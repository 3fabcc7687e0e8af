"""The invitation a link names, for its page (docs/domain.md §1.5); read only."""

from __future__ import annotations

from campaigns.models import Invitation


def pending_invitation(token: str) -> Invitation | None:
    """The invitation of the link `token` if it still works (not used, not expired)."""
    return (
        Invitation.objects.pending()
        .select_related("team", "invited_by")
        .filter(token_hash=Invitation.hash(token))
        .first()
    )
