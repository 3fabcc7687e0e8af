"""Quality per dollar (docs/domain.md §18.6): each live item's best value of the campaign's
chosen metric against what its full runs cost so far, for the money panel and the closing
report; its pilots' figures apart (a short pilot is a measurement, not the item's result).

The metric is the one of the campaign's first metric-threshold stop rule, else "loss"; which
end is best is campaigns/domain/metric_direction.py's ``loss_like``. Cost is
campaigns/selectors/run_cost.py's cost so far of each run (wall hours × GPUs × the rate its
lots or hourly rate give), summed per item and run kind. Cut items are left out (listed by
name): what they bought no longer answers the question.
"""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from typing import Any

from django.db.models import Max, Min
from django.utils import timezone

from campaigns.domain.metric_direction import loss_like
from campaigns.models import (
    Campaign,
    ItemStatus,
    MetricSummary,
    PlannedItem,
    Run,
    RunKind,
    StopRuleKind,
)
from campaigns.selectors import run_cost as accrual
from ledger.charts import quality_per_dollar_chart

# The kinds of run that count: full runs are the item's result, pilots are drawn apart.
_KINDS = (RunKind.FULL, RunKind.PILOT)
_CENT = Decimal("0.01")


def value_for_money(campaign: Campaign, until: datetime | None = None) -> dict[str, Any]:
    """`{"metric", "lower_is_better", "best_is", "currency", "items": [{"item", "cost",
    "best", "pilot": {"cost", "best"} or null}], "cut_items"}`: cost a decimal string (null when
    nothing prices an hour), best a number (null when the item's full runs logged no finite value
    of the metric); ``pilot`` the same figures of its pilot runs (null without a pilot)."""
    rule = campaign.stop_rules.filter(kind=StopRuleKind.METRIC_THRESHOLD).exclude(metric="").first()
    metric = rule.metric if rule is not None else "loss"
    lower = loss_like(metric, rule.comparator if rule is not None else "")
    costs, priced = _costs(campaign, until or timezone.now())
    bests = _bests(campaign, metric, lower)
    items, cut = [], []
    for item in PlannedItem.objects.filter(campaign=campaign).order_by("id"):
        if item.status == ItemStatus.CUT:
            cut.append(item.name)
            continue
        row = _figures(costs, bests, priced, item.pk, RunKind.FULL)
        pilot = None
        if (item.pk, RunKind.PILOT) in costs or (item.pk, RunKind.PILOT) in bests:
            pilot = _figures(costs, bests, priced, item.pk, RunKind.PILOT)
        items.append({"item": item.name, **row, "pilot": pilot})
    return {
        "metric": metric,
        "lower_is_better": lower,
        "best_is": quality_per_dollar_chart.best_in_words(metric, lower),
        "currency": campaign.currency,
        "items": items,
        "cut_items": cut,
    }


def _costs(campaign: Campaign, now: datetime) -> tuple[dict[tuple[int, str], Decimal], bool]:
    """By (item, run kind): the runs' cost so far; False when an hour had no price."""
    prices = accrual.pricing(campaign)
    costs: dict[tuple[int, str], Decimal] = {}
    priced = True
    runs = Run.objects.filter(campaign=campaign, variant__isnull=False, kind__in=_KINDS)
    for run in runs.select_related("variant"):
        if run.variant_id is None or run.variant is None:
            continue
        found = accrual.cost_of_run(run, prices, gpu=run.variant.gpu, now=now)
        if found is None:
            priced = False
            continue
        key = (run.variant_id, run.kind)
        costs[key] = costs.get(key, Decimal(0)) + found[0]
    return costs, priced


def _bests(campaign: Campaign, metric: str, lower: bool) -> dict[tuple[int, str], float | None]:
    """By (item, run kind): the best finite value, from the runs' summaries (not the points)."""
    best_of = Min("min_value") if lower else Max("max_value")
    rows = (
        MetricSummary.objects.filter(
            run__campaign=campaign, run__variant__isnull=False, run__kind__in=_KINDS, name=metric
        )
        .values("run__variant_id", "run__kind")
        .annotate(best=best_of)
        .values_list("run__variant_id", "run__kind", "best")
    )
    return {(item, kind): best for item, kind, best in rows}


def _figures(
    costs: dict[tuple[int, str], Decimal],
    bests: dict[tuple[int, str], float | None],
    priced: bool,
    item: int,
    kind: str,
) -> dict[str, Any]:
    cost = costs.get((item, kind), Decimal(0)) if priced else costs.get((item, kind))
    return {
        "cost": None if cost is None else str(cost.quantize(_CENT)),
        "best": bests.get((item, kind)),
    }
