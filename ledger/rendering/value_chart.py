"""The scatter of quality per dollar (docs/domain.md §18.6), drawn from a
`ledger.selectors.quality_per_dollar.value_for_money` answer: the geometry is
ledger/charts/quality_per_dollar_chart.py, the SVG its template."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from django.template.loader import render_to_string
from django.utils.safestring import SafeString, mark_safe

from ledger.charts import quality_per_dollar_chart as drawing


def value_chart_html(value: dict[str, Any]) -> SafeString:
    """The scatter of a `value_for_money` answer (pilots as hollow dots apart); empty when no
    item has a cost and a best."""
    points = [
        drawing.ItemValue(row["item"], Decimal(row["cost"]), row["best"])
        for row in value["items"]
        if row["cost"] is not None
    ]
    points += [
        drawing.ItemValue(row["item"], Decimal(row["pilot"]["cost"]), row["pilot"]["best"], True)
        for row in value["items"]
        if row["pilot"] is not None and row["pilot"]["cost"] is not None
    ]
    chart = drawing.value_chart(
        points, value["metric"], value["lower_is_better"], value["currency"]
    )
    if chart is None:
        return mark_safe("")
    return mark_safe(
        render_to_string("ledger/_value_chart.svg.html", {"chart": chart, "value": value})
    )
