"""The one value-axis rule (campaigns/charts/axes.py), the SVG curves' edge cases and the
interactive charts' JSON (campaigns/charts/interactive.py), without a database."""

from __future__ import annotations

import json
import math

from hypothesis import given
from hypothesis import strategies as st

from campaigns.charts.axes import fraction, value_range
from campaigns.charts.curves import Overlaid, curve_svg, overlay_svg
from campaigns.charts.interactive import chart_payload, single
from campaigns.domain.metric_direction import best_value, loss_like


def test_a_constant_series_is_padded_relative_to_its_magnitude() -> None:
    lo, hi = value_range([3e-4, 3e-4])
    assert math.isclose(lo, 2.85e-4) and math.isclose(hi, 3.15e-4)
    assert value_range([0.0]) == (-1.0, 1.0)


def test_a_huge_constant_keeps_a_range_of_nonzero_width() -> None:
    lo, hi = value_range([7.8e24])
    assert lo < 7.8e24 < hi


@given(st.lists(st.floats(allow_nan=True, allow_infinity=True), max_size=20))
def test_every_range_is_finite_and_nonempty_and_positions_stay_finite(values: list[float]) -> None:
    lo, hi = value_range(values)
    assert math.isfinite(lo) and math.isfinite(hi) and lo < hi
    for v in values:
        if math.isfinite(v):
            assert -1e-9 <= fraction(v, lo, hi) <= 1 + 1e-9


def test_curves_draw_constant_one_point_huge_and_non_finite_series() -> None:
    lr = curve_svg("lr", [(0, 3e-4), (100, 3e-4)])
    assert "-0.4998" not in lr and "0.000315" in lr
    one = curve_svg("loss", [(50, 1.0)])
    assert one.count("step 50") == 1
    huge = curve_svg("loss", [(0, 7.8e24), (1, 7.8e24), (2, float("nan"))])
    assert 'class="non-finite"' in huge
    wide = overlay_svg("x", [Overlaid("a", "#000", False, [(0, -1.7e308), (1, 1.7e308)])])
    assert "nan" not in wide.replace("non-finite", "")


def test_the_payload_is_valid_json_with_non_finite_points_listed_apart() -> None:
    data = chart_payload(
        "loss",
        [
            Overlaid("r1", "#111", False, [(0, 2.0), (10, float("inf"))]),
            Overlaid("r2", "#222", True, [(5, 1.5)]),
        ],
        threshold=3.0,
    )
    text = json.dumps(data, allow_nan=False)  # JSON.parse refuses NaN
    assert json.loads(text)["x"] == [0, 5, 10]
    assert data["series"][0]["values"] == [2.0, None, None]
    assert data["series"][1]["values"] == [None, 1.5, None]
    assert data["non_finite"] == [{"label": "r1", "step": 10, "token": "Infinity"}]
    assert data["threshold"] == 3.0
    assert single("lr", [(1, 0.1)], stop_step=4)["stop_step"] == 4


def test_best_is_the_min_for_loss_like_metrics_and_the_max_otherwise() -> None:
    assert loss_like("val_loss") and not loss_like("accuracy")
    assert best_value([3.0, 1.0, float("nan")], lower_is_better=True) == 1.0
    assert best_value([3.0, 1.0], lower_is_better=False) == 3.0
    assert best_value([float("nan")], lower_is_better=True) is None
