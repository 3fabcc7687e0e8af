"""The downsampling rule of campaigns/domain/downsampling.py, without a database."""

from __future__ import annotations

import math

from hypothesis import given
from hypothesis import strategies as st

from campaigns.domain.downsampling import as_json_value, downsample

values = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False, width=32),
    st.sampled_from([math.nan, math.inf, -math.inf]),
)
series_st = st.lists(values, min_size=0, max_size=400).map(
    lambda vs: [(step * 10, v) for step, v in enumerate(vs)]
)


def same(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or a == b


@given(series_st, st.integers(min_value=1, max_value=120))
def test_it_returns_at_most_max_points_in_step_order_taken_from_the_series(
    points: list[tuple[int, float]], max_points: int
) -> None:
    out = downsample(points, max_points)
    assert len(out) <= max_points
    steps = [s for s, _ in out]
    assert steps == sorted(set(steps))
    by_step = dict(points)
    assert all(same(by_step[s], v) for s, v in out)


@given(series_st, st.integers(min_value=1, max_value=120))
def test_it_always_keeps_the_last_point(points: list[tuple[int, float]], max_points: int) -> None:
    out = downsample(points, max_points)
    if points:
        assert out[-1][0] == points[-1][0]


@given(series_st, st.integers(min_value=2, max_value=120))
def test_it_keeps_every_non_finite_point_when_they_fit(
    points: list[tuple[int, float]], max_points: int
) -> None:
    non_finite = [s for s, v in points if not math.isfinite(v)]
    out_steps = {s for s, _ in downsample(points, max_points)}
    if len(non_finite) + 1 <= max_points:
        assert set(non_finite) <= out_steps


@given(series_st, st.integers(min_value=3, max_value=120))
def test_it_keeps_the_finite_minimum_and_maximum(
    points: list[tuple[int, float]], max_points: int
) -> None:
    finite = [v for _, v in points if math.isfinite(v)]
    non_finite = len(points) - len(finite)
    out = downsample(points, max_points)
    if finite and non_finite + 3 <= max_points:
        kept = [v for _, v in out if math.isfinite(v)]
        assert min(kept) == min(finite)
        assert max(kept) == max(finite)


def test_a_one_step_spike_in_a_million_points_survives() -> None:
    points = [(step, 1.0 - step * 1e-7) for step in range(1_000_000)]
    points[654_321] = (654_321, 50.0)
    points[700_000] = (700_000, math.nan)
    out = downsample(points, 500)
    assert len(out) <= 500
    assert (654_321, 50.0) in out
    assert any(s == 700_000 and math.isnan(v) for s, v in out)
    assert out[-1] == points[-1]


def test_a_short_series_comes_back_whole() -> None:
    points = [(1, 3.0), (2, math.inf), (3, 1.0)]
    assert downsample(points, 3) == points


def test_too_many_non_finite_points_are_thinned_to_where_each_stretch_starts_and_ends() -> None:
    points = [(s, 1.0) for s in range(10)] + [(s, math.nan) for s in range(10, 1000)]
    out = downsample(points, 4)
    steps = [s for s, _ in out]
    assert 10 in steps  # the divergence starts here
    assert steps[-1] == 999
    assert len(out) <= 4


def test_non_finite_values_are_spelled_as_json_tokens() -> None:
    assert [as_json_value(v) for v in (math.nan, math.inf, -math.inf, 1.5)] == [
        "NaN",
        "Infinity",
        "-Infinity",
        1.5,
    ]
