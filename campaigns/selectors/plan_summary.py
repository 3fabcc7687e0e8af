"""What the campaign page says about a plan besides its hours: the items per tier (cut items
not counted, docs/domain.md §6.4). Every hour figure, the headline, the Gantt and the plan's
warnings come from the campaign's timeline (campaigns/domain/timeline.py, read through
`estimates.selectors.timeline.campaign_forecast`, shown by `estimates_timeline`'s tags);
the plan figures alone from `campaigns.selectors.timeline.plan_figures_of`."""

from __future__ import annotations

from collections import Counter

from campaigns.models import Campaign, ItemStatus, Tier


def tier_counts(campaign: Campaign) -> dict[str, int]:
    """Live items per tier, every tier listed."""
    tiers = Counter(campaign.items.exclude(status=ItemStatus.CUT).values_list("tier", flat=True))
    return {t: tiers.get(t, 0) for t in Tier.values}
