"""Every drawing survives the series a real run produces (issue 18): constant, one point, huge
(a loss diverged to 7.8e24), tiny, non-finite, and spans beyond floats. No ZeroDivisionError,
no NaN coordinate, and a constant value's axis stays near the value."""

from __future__ import annotations

import math
import re
import sys
from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from campaigns.charts.axes import value_range as _value_range
from campaigns.charts.curves import Overlaid, curve_svg, overlay_svg
from ledger.charts.quality_per_dollar_chart import ItemValue, value_chart

SERIES = {
    "constant lr": [(s, 2e-4) for s in range(0, 100, 10)],
    "one point": [(50, 2.31)],
    "diverged": [(10, 2.3), (20, 7.8e24)],
    "constant huge": [(10, 7.8e24), (20, 7.8e24)],
    "one huge point": [(50, 7.8e24)],
    "zero": [(1, 0.0), (2, 0.0)],
    "subnormal": [(1, 5e-324)],
    "non-finite only": [(1, math.nan), (2, math.inf), (3, -math.inf)],
    "span beyond floats": [(1, -1.7e308), (2, 1.7e308)],
}


def coordinates(svg: str) -> list[str]:
    return re.findall(r'(?:x|y|cx|cy|width|height)="([^"]*)"', svg) + re.findall(
        r'points="([^"]*)"', svg
    )


@pytest.mark.parametrize("name", sorted(SERIES))
def test_a_curve_of_every_extreme_draws(name: str) -> None:
    svg = curve_svg("loss", SERIES[name])
    overlay = overlay_svg("loss", [Overlaid("r1", "#000", False, SERIES[name])])
    for drawn in (svg, overlay):
        assert "nan" not in " ".join(coordinates(drawn)).lower(), name
        assert "inf" not in " ".join(coordinates(drawn)).lower(), name


def test_a_constant_value_gets_an_axis_around_itself() -> None:
    lo, hi = _value_range([2e-4, 2e-4])
    assert lo < 2e-4 < hi and hi - lo < 1e-4  # not -0.4998 to 0.5002
    lo, hi = _value_range([7.8e24])
    assert lo < 7.8e24 < hi  # a ±0.5 pad is lost at this magnitude


@given(st.lists(st.floats(allow_nan=True, allow_infinity=True), max_size=6))
def test_the_value_axis_is_always_a_finite_nonempty_range(values: list[float]) -> None:
    lo, hi = _value_range(values)
    # The width itself may overflow (values at ±1.7e308); positions are computed on halves.
    assert math.isfinite(lo) and math.isfinite(hi) and lo < hi and math.isfinite(hi / 2 - lo / 2)
    for value in values:
        if math.isfinite(value):
            assert lo <= value <= hi


def test_a_constant_series_at_the_largest_float_keeps_a_finite_axis() -> None:
    lo, hi = _value_range([1.6264842648754285e308])  # the case hypothesis found in CI
    assert math.isfinite(hi) and lo < 1.6264842648754285e308 <= hi
    lo, hi = _value_range([-sys.float_info.max])
    assert math.isfinite(lo) and lo <= -sys.float_info.max < hi


@given(
    st.lists(
        st.one_of(st.none(), st.floats(allow_nan=True, allow_infinity=True)),
        min_size=1,
        max_size=5,
    ),
    st.booleans(),
)
def test_the_value_chart_places_every_dot_inside(bests: list[float | None], lower: bool) -> None:
    items = [ItemValue(f"i{n}", Decimal(n + 1), b) for n, b in enumerate(bests)]
    chart = value_chart(items, "loss", lower, "USD")
    if chart is None:
        return
    for dot in chart.dots:
        assert math.isfinite(dot.x) and math.isfinite(dot.y)
        assert 0 <= dot.y <= chart.height


@given(
    st.lists(
        st.tuples(st.text(min_size=1, max_size=80), st.integers(1, 10_000), st.floats(0, 10)),
        min_size=1,
        max_size=6,
    )
)
def test_quality_per_dollar_labels_stay_inside_the_chart(
    rows: list[tuple[str, int, float]],
) -> None:
    items = [ItemValue(name, Decimal(cost), best) for name, cost, best in rows]
    chart = value_chart(items, "f1", False, "USD")
    assert chart is not None
    for dot in chart.dots:
        # 11 px text: at most ~6.5 px a character; the label reads away from the nearer edge.
        width = 6.5 * len(dot.label)
        if dot.anchor == "end":
            assert dot.label_x - width >= 0
        else:
            assert dot.label_x + width <= chart.width
