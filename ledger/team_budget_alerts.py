"""The team-budget alert (docs/domain.md §22): raised when a running or coming period's forecast
passes its allowance, resolved when it no longer does.

An alert belongs to a campaign (it is delivered like the others, §19): the team's campaign
committed last among those still open carries it, keyed by the allowance, so one condition is
one open alert whatever campaign carries it.
"""

from __future__ import annotations

from datetime import datetime

from django.db import transaction
from django.utils import timezone

from campaigns.models import Campaign, CampaignStatus
from ledger.domain import team_budget as tb
from ledger.models import Alert, AlertKind
from ledger.selectors import team_budget as budgets
from ledger.services.alerts import store_new_alert

OPEN = (CampaignStatus.COMMITTED, CampaignStatus.RUNNING)


def _key(budget: tb.PeriodBudget) -> str:
    return f"allowance:{budget.allowance.id}"


@transaction.atomic
def store_team_budget_alerts(team_id: int, now: datetime | None = None) -> list[Alert]:
    """Raise the team's new team-budget alerts, resolve those whose forecast came back under."""
    now = now or timezone.now()
    over = {
        _key(b): b for b in budgets.team_budget(team_id, now) if b.forecast_exceeds and b.end > now
    }
    open_alerts = Alert.objects.filter(
        campaign__team_id=team_id, kind=AlertKind.TEAM_BUDGET, resolved_at=None
    )
    open_keys = set(open_alerts.values_list("key", flat=True))
    open_alerts.exclude(key__in=list(over)).update(resolved_at=now)
    carrier = (
        Campaign.objects.filter(team_id=team_id, status__in=OPEN)
        .order_by("-committed_at", "-id")
        .first()
    )
    if carrier is None:
        return []
    raised = []
    for key, budget in over.items():
        if key in open_keys:
            continue
        stored = store_new_alert(
            campaign=carrier,
            kind=AlertKind.TEAM_BUDGET,
            key=key,
            message=f"The team's forecast passes its allowance: {tb.describe(budget)}",
        )
        if stored is not None:
            raised.append(stored)
    return raised
