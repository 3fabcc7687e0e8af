"""Quality per dollar (docs/domain.md §18.6): each item's best value of the campaign's chosen
metric against what its runs cost so far, for the money panel and the closing report.

The metric is the one of the campaign's first metric-threshold stop rule, else "loss"; which
end is best is campaigns/domain/metric_direction.py's ``loss_like``. Cost is
campaigns/selectors/run_cost.py's cost so far
of each run (wall hours × GPUs × the rate its lots or hourly rate give), summed per item.
"""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from typing import Any

from django.db.models import Max, Min
from django.template.loader import render_to_string
from django.utils import timezone
from django.utils.safestring import SafeString, mark_safe

from campaigns.domain.metric_direction import loss_like
from campaigns.models import Campaign, MetricSummary, PlannedItem, Run, StopRuleKind
from campaigns.selectors import run_cost as accrual
from ledger.charts import quality_per_dollar_chart as drawing


def value_for_money(campaign: Campaign, until: datetime | None = None) -> dict[str, Any]:
    """`{"metric", "lower_is_better", "best_is", "currency", "items": [{"item", "cost",
    "best"}]}`: cost a decimal string (null when nothing prices an hour), best a number (null
    when the item logged no finite value of the metric)."""
    rule = campaign.stop_rules.filter(kind=StopRuleKind.METRIC_THRESHOLD).exclude(metric="").first()
    metric = rule.metric if rule is not None else "loss"
    lower = loss_like(metric, rule.comparator if rule is not None else "")
    now = until or timezone.now()
    prices = accrual.pricing(campaign)
    costs: dict[int, Decimal] = {}
    priced = True
    for run in Run.objects.filter(campaign=campaign, variant__isnull=False).select_related(
        "variant"
    ):
        if run.variant_id is None or run.variant is None:
            continue
        found = accrual.cost_of_run(run, prices, gpu=run.variant.gpu, now=now)
        if found is None:
            priced = False
            continue
        costs[run.variant_id] = costs.get(run.variant_id, Decimal(0)) + found[0]
    # From the runs' summaries (finite extremes), not the points.
    best_of = Min("min_value") if lower else Max("max_value")
    bests = dict(
        MetricSummary.objects.filter(
            run__campaign=campaign, run__variant__isnull=False, name=metric
        )
        .values("run__variant_id")
        .annotate(best=best_of)
        .values_list("run__variant_id", "best")
    )
    items = []
    for item in PlannedItem.objects.filter(campaign=campaign).order_by("id"):
        cost = costs.get(item.pk, Decimal(0)) if priced else costs.get(item.pk)
        items.append(
            {
                "item": item.name,
                "cost": None if cost is None else str(cost.quantize(Decimal("0.01"))),
                "best": bests.get(item.pk),
            }
        )
    return {
        "metric": metric,
        "lower_is_better": lower,
        "best_is": drawing.best_in_words(metric, lower),
        "currency": campaign.currency,
        "items": items,
    }


def value_chart_html(value: dict[str, Any]) -> SafeString:
    """The scatter of a `value_for_money` answer; empty when no item has a cost and a best."""
    points = [
        drawing.ItemValue(row["item"], Decimal(row["cost"]), row["best"])
        for row in value["items"]
        if row["cost"] is not None
    ]
    chart = drawing.value_chart(
        points, value["metric"], value["lower_is_better"], value["currency"]
    )
    if chart is None:
        return mark_safe("")
    return mark_safe(
        render_to_string("ledger/_value_chart.svg.html", {"chart": chart, "value": value})
    )
