"""The team-budget alert (docs/domain.md §22.4): raised when a running or coming period's
forecast passes its allowance, resolved when it no longer does; delivered on every channel of
the team like any alert (`raise_alert` opens its outbox rows).

An alert belongs to a campaign: the team's campaign committed last among those still open
carries it, keyed by the allowance, so one condition is one open alert whatever campaign
carries it.
"""

from __future__ import annotations

from datetime import datetime

from django.db import transaction
from django.utils import timezone

from campaigns.models import Campaign, CampaignStatus
from ledger.domain import alerts
from ledger.domain import team_budget as tb
from ledger.models import Alert
from ledger.selectors import team_budget as budgets
from ledger.services.alerts import raise_alert

OPEN = (CampaignStatus.COMMITTED, CampaignStatus.RUNNING)
KIND = "team_budget"


def _key(budget: tb.PeriodBudget) -> str:
    return f"allowance:{budget.allowance.id}"


@transaction.atomic
def store_team_budget_alerts(*, team_id: int, now: datetime | None = None) -> list[Alert]:
    """Raise the team's new team-budget alerts, resolve those whose forecast came back under."""
    now = now or timezone.now()
    over = {
        _key(b): b for b in budgets.team_budget(team_id, now) if b.forecast_exceeds and b.end > now
    }
    open_alerts = Alert.objects.filter(campaign__team_id=team_id, kind=KIND, resolved_at=None)
    open_keys = set(open_alerts.values_list("key", flat=True))
    open_alerts.exclude(key__in=list(over)).update(resolved_at=now)
    carrier = (
        Campaign.objects.filter(team_id=team_id, status__in=OPEN)
        .order_by("-committed_at", "-id")
        .first()
    )
    if carrier is None:
        return []
    raised = [
        raise_alert(
            campaign=carrier,
            condition=alerts.Condition(
                KIND, key, f"The team's forecast passes its allowance: {tb.describe(budget)}"
            ),
            now=now,
        )
        for key, budget in over.items()
        if key not in open_keys
    ]
    return [alert for alert in raised if alert is not None]
