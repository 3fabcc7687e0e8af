"""Signals the campaigns services send, so that the layers above can act on a domain event
without the bottom layer knowing them (docs/domain.md §17).

Receivers run inside the sender's transaction: what they write commits or rolls back with the
event itself (the ledger posts the reserved lots in the same transaction as the commit).
"""

from django.dispatch import Signal

# Sent by services.commit_plan once the baseline is frozen; kwargs: campaign, baseline, user.
plan_committed = Signal()

# Sent by services.close_campaign once the campaign is closed; kwargs: campaign, user.
campaign_closed = Signal()
