"""Reading a team's portfolio (docs/domain.md §22.5): every campaign with its status, question,
budget, spent, forecast, cost per accepted deliverable and conclusion, and the current period's
burn-down against its allowance. A fixed number of queries, whatever the number of campaigns:
the ledger and the deliverables are read grouped by campaign, never campaign by campaign."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any

from django.db.models import Sum
from django.utils import timezone

from campaigns.models import Campaign
from ledger.domain import portfolio as pf
from ledger.domain import spend as burn
from ledger.domain import team_budget as tb
from ledger.domain.cost_per_deliverable import (
    DeliverableFacts,
    Entry,
    MixedCurrencyError,
    summarize,
)
from ledger.models import Deliverable, LedgerEntry
from ledger.selectors import team_budget as budgets


@dataclass(frozen=True)
class PortfolioRow:
    id: int
    title: str
    status: str
    question: str
    currency: str
    budget: Decimal | None
    spent: Decimal
    forecast: Decimal
    external: Decimal
    cost_per_accepted: Decimal | None
    undefined_reason: str | None
    conclusion: str


def _ledger_sums(team_id: int) -> dict[int, list[Entry]]:
    """Per campaign, one summed entry per kind and currency (1 query)."""
    found: dict[int, list[Entry]] = defaultdict(list)
    rows = (
        LedgerEntry.objects.filter(campaign__team_id=team_id)
        .values("campaign_id", "kind", "currency")
        .annotate(total=Sum("amount"))
        .order_by()
    )
    for n, row in enumerate(rows):
        found[row["campaign_id"]].append(
            Entry(id=n, kind=row["kind"], amount=row["total"], currency=row["currency"])
        )
    return found


def _deliverables(team_id: int) -> dict[int, list[DeliverableFacts]]:
    """Per campaign, its distinct (corpus, accepted) deliverables (1 query)."""
    found: dict[int, list[DeliverableFacts]] = defaultdict(list)
    rows = (
        Deliverable.objects.filter(campaign__team_id=team_id)
        .values_list("campaign_id", "corpus_name", "corpus_revision", "accepted")
        .distinct()
    )
    for campaign_id, name, revision, accepted in rows:
        found[campaign_id].append(
            DeliverableFacts(
                corpus_name=name, corpus_revision=revision, accepted=accepted, rejection_reasons=()
            )
        )
    return found


def _row(campaign: Mapping[str, Any], entries: list[Entry], delivered: list[DeliverableFacts],
         burns: list[tb.Burn], now: datetime) -> PortfolioRow:  # fmt: skip
    try:
        summary = summarize(entries, delivered, campaign["currency"])
        incurred, external = summary.incurred, summary.external
        per, why = summary.cost_per_accepted, summary.undefined_reason
    except MixedCurrencyError as exc:
        incurred, external, per, why = Decimal(0), Decimal(0), None, str(exc)
    money = pf.campaign_money(incurred, burns, now)
    return PortfolioRow(
        id=campaign["id"],
        title=campaign["title"],
        status=campaign["status"],
        question=campaign["question"],
        currency=campaign["currency"],
        budget=campaign["budget"],
        spent=money.spent,
        forecast=money.forecast,
        external=external,
        cost_per_accepted=per,
        undefined_reason=why,
        conclusion=campaign["conclusion"],
    )


def current_period(periods: list[tb.PeriodBudget], now: datetime) -> tb.PeriodBudget | None:
    """The money allowance whose period holds now (a quarter before a month, all GPUs first)."""
    running = [p for p in periods if p.start <= now < p.end and p.money is not None]
    running.sort(key=lambda p: (p.allowance.kind != "quarter", p.allowance.gpu_model != ""))
    return running[0] if running else None


def team_portfolio(team_id: int, now: datetime | None = None) -> dict[str, Any]:
    """The rows (newest campaign first), the current period's budget and its burn-down."""
    now = now or timezone.now()
    campaigns = list(
        Campaign.objects.filter(team_id=team_id)
        .order_by("-created_at", "-id")
        .values("id", "title", "status", "question", "currency", "budget", "conclusion")
    )
    facts = budgets.team_facts(team_id)
    by_campaign: dict[int, list[tb.Burn]] = defaultdict(list)
    for b in facts.burns:
        if b.campaign_id is not None:
            by_campaign[b.campaign_id].append(b)
    sums, delivered = _ledger_sums(team_id), _deliverables(team_id)
    rows = [
        _row(c, sums.get(c["id"], []), delivered.get(c["id"], []), by_campaign[c["id"]], now)
        for c in campaigns
    ]
    periods = tb.team_budget(facts.allowances, facts.charges, facts.burns, now)
    period = current_period(periods, now)
    chart: burn.BurnChart | None = None
    if period is not None:
        chart = pf.burn_down(period, facts.charges, now)
    return {"rows": rows, "period": period, "chart": chart, "periods": periods}
