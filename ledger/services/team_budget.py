"""Writing a team's allowances (docs/domain.md §22): the admin and the API call these."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

from django.contrib.auth.models import User
from django.db import transaction

from campaigns.models import Team
from ledger.models import TeamAllowance


@transaction.atomic
def set_allowance(
    *,
    team: Team,
    period_kind: str,
    period_start: date,
    amount: Decimal | None = None,
    currency: str = "",
    gpu_hours: Decimal | None = None,
    gpu_model: str = "",
    acting_user: User | None = None,
) -> TeamAllowance:
    """State (or restate) the team's allowance for one period and GPU model; ValidationError
    names the field (a period start that is not the first day of its month or quarter, money
    without a currency, neither money nor hours)."""
    allowance = (
        TeamAllowance.objects.select_for_update()
        .filter(team=team, period_kind=period_kind, period_start=period_start, gpu_model=gpu_model)
        .first()
    ) or TeamAllowance(
        team=team, period_kind=period_kind, period_start=period_start, gpu_model=gpu_model
    )
    allowance.amount = amount
    allowance.currency = (currency or "").upper()
    allowance.gpu_hours = gpu_hours
    allowance.full_clean()
    allowance.save()
    return allowance
