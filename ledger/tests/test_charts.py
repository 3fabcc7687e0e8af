"""The report's chart geometry (pure)."""

from __future__ import annotations

from decimal import Decimal

from ledger.charts import report_charts as charts


def test_it_draws_a_planned_and_an_observed_bar_per_observed_stage() -> None:
    chart = charts.timeline_chart(
        [
            charts.TimelineRow("setup", 0, 2, 0, 2.5, deviates=True),
            charts.TimelineRow("train", 2, 24, None, None),
        ],
        window_hours=72,
    )
    assert len(chart.rects) == 3
    assert all(r.width > 0 for r in chart.rects)
    assert chart.rects[1].fill == charts.OBSERVED_OVER
    assert chart.rects[1].width > chart.rects[0].width
    window = [r for r in chart.rules if r.stroke == charts.WINDOW]
    assert len(window) == 1
    # The window is the widest thing on the axis: it sits at the right end of the plot.
    assert window[0].x1 == max(r.x1 for r in chart.rules)


def test_a_zero_hour_stage_is_still_a_visible_tick() -> None:
    chart = charts.timeline_chart([charts.TimelineRow("check", 5, 5)], window_hours=10)
    assert chart.rects[0].width >= 2


def test_an_overflowing_calendar_stretches_the_axis_beyond_the_window() -> None:
    chart = charts.timeline_chart([charts.TimelineRow("train", 0, 78)], window_hours=72)
    window = next(r for r in chart.rules if r.stroke == charts.WINDOW)
    bar = chart.rects[0]
    assert bar.x + bar.width > window.x1


def test_cost_bars_scale_to_the_largest_amount() -> None:
    chart = charts.cost_chart(
        [
            charts.CostRow("rental", Decimal("47.14"), charts.RENTAL),
            charts.CostRow("external", Decimal("12.00"), charts.EXTERNAL),
            charts.CostRow("included", Decimal("0"), charts.INCLUDED),
        ],
        "USD",
    )
    rental, external, included = chart.rects
    assert rental.width == 620
    assert abs(external.width - 620 * 12 / 47.14) < 0.1
    assert included.width == 0
    assert any(label.text == "47.14 USD" for label in chart.labels)


def test_no_stages_says_so_instead_of_drawing_nothing() -> None:
    chart = charts.timeline_chart([], window_hours=72)
    assert chart.rects == ()
    assert "No stages" in chart.labels[0].text
