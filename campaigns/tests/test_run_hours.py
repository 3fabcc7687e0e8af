"""A run's hours from its own clock (campaigns/domain/run_hours.py): pure, no database."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from campaigns.domain.run_hours import (
    CLOCK_SKEW,
    HOURS_MAX,
    RunClock,
    checked_moment,
    ended_hours,
    heard,
    hours_so_far,
    is_silent,
    measured_hours,
    silence_limit,
    source,
)

T0 = datetime(2026, 12, 3, 8, 0, tzinfo=UTC)
seconds = st.floats(min_value=0, max_value=3_600_000, allow_nan=False)
prior = st.decimals(min_value=0, max_value=100_000, places=2)


def test_measured_hours_are_the_segment_plus_the_earlier_ones_half_up_to_the_hundredth() -> None:
    # 18 s is 0.005 h: half-up gives 0.01; 17.9 s stays 0.00.
    assert measured_hours(started=T0, ended=T0 + timedelta(seconds=18)) == Decimal("0.01")
    assert measured_hours(started=T0, ended=T0 + timedelta(seconds=17.9)) == Decimal("0.00")
    assert measured_hours(
        started=T0, ended=T0 + timedelta(hours=2, minutes=15), prior_hours=Decimal("4.00")
    ) == Decimal("6.25")


def test_a_clock_that_went_backwards_measures_nothing_not_a_negative() -> None:
    assert measured_hours(started=T0, ended=T0 - timedelta(hours=1)) == 0
    assert measured_hours(started=T0, ended=T0 - timedelta(hours=1), prior_hours=Decimal(3)) == 3


def test_stated_or_corrected_hours_win_over_the_clock() -> None:
    later = T0 + timedelta(hours=1, minutes=30)
    assert hours_so_far(RunClock(T0, observed_hours=Decimal("3")), later) == 3
    assert hours_so_far(RunClock(T0), later) == Decimal("1.50")
    assert hours_so_far(RunClock(T0, ended=T0 + timedelta(hours=1)), later) == Decimal("1.00")


@given(a=seconds, b=seconds, before=prior)
def test_measured_hours_grow_with_the_end_and_never_go_below_the_earlier_segments(
    a: float, b: float, before: Decimal
) -> None:
    early, late = sorted((a, b))
    first = measured_hours(started=T0, ended=T0 + timedelta(seconds=early), prior_hours=before)
    second = measured_hours(started=T0, ended=T0 + timedelta(seconds=late), prior_hours=before)
    assert before <= first <= second <= HOURS_MAX
    assert first == first.quantize(Decimal("0.01"))


@given(span=seconds, before=prior)
def test_measured_hours_are_within_half_a_hundredth_of_the_wall_clock(
    span: float, before: Decimal
) -> None:
    hours = measured_hours(started=T0, ended=T0 + timedelta(seconds=span), prior_hours=before)
    exact = before + Decimal(repr(span)) / 3600
    assert abs(hours - exact) <= Decimal("0.005")


@given(a=seconds, b=seconds)
def test_segments_add_up_to_the_whole_within_the_rounding(a: float, b: float) -> None:
    """A run resumed once: its first segment's hours carried as prior hours, then the second
    measured on top, give the whole stretch within one hundredth per segment."""
    first = measured_hours(started=T0, ended=T0 + timedelta(seconds=a))
    middle = T0 + timedelta(seconds=a)
    both = measured_hours(started=middle, ended=middle + timedelta(seconds=b), prior_hours=first)
    whole = measured_hours(started=T0, ended=middle + timedelta(seconds=b))
    assert abs(both - whole) <= Decimal("0.01")


def test_an_ended_run_counts_what_it_recorded_and_a_running_one_nothing_yet() -> None:
    assert ended_hours(status="completed", observed_hours=Decimal("2.5")) == Decimal("2.5")
    assert ended_hours(status="running", observed_hours=Decimal("2.5")) is None
    assert ended_hours(status="failed", observed_hours=None, prior_hours=Decimal(3)) == 3
    assert ended_hours(status="completed", observed_hours=None) is None


def test_the_source_says_measured_stated_or_corrected() -> None:
    two = Decimal("2.00")
    assert source(observed_hours=two, measured=two, reason="") == "measured"
    assert source(observed_hours=two, measured=Decimal("1.50"), reason="") == "stated"
    assert source(observed_hours=two, measured=two, reason="the GPU sat idle") == "corrected"
    assert source(observed_hours=None, measured=None, reason="") is None


def test_a_clients_moment_is_taken_within_the_skew_and_refused_beyond_or_before() -> None:
    ahead = T0 + CLOCK_SKEW - timedelta(seconds=1)
    assert checked_moment(ahead, now=T0, not_before=T0, name="started_at") == T0
    assert checked_moment(T0 - timedelta(1), now=T0, not_before=T0 - timedelta(2), name="x") == (
        T0 - timedelta(1)
    )
    with pytest.raises(ValueError, match="started_at"):
        checked_moment(T0 + timedelta(hours=1), now=T0, not_before=T0, name="started_at")
    with pytest.raises(ValueError, match="ended_at"):
        checked_moment(T0 - timedelta(hours=1), now=T0, not_before=T0, name="ended_at")


@given(moments=st.lists(st.integers(-10_000, 10_000), min_size=1, max_size=30))
def test_the_heartbeat_never_moves_back_nor_past_now(moments: list[int]) -> None:
    now = T0 + timedelta(seconds=5_000)
    last = None
    for offset in moments:
        current = heard(last, T0 + timedelta(seconds=offset), now)
        assert current <= now
        assert last is None or current >= last
        last = current


def test_silence_is_a_multiple_of_the_interval_and_at_least_the_minimum() -> None:
    assert silence_limit(interval=60, multiple=5, minimum=900) == 900
    assert silence_limit(interval=600, multiple=5, minimum=900) == 3000
    assert is_silent(heartbeat=T0, now=T0 + timedelta(seconds=901), limit_seconds=900)
    assert not is_silent(heartbeat=T0, now=T0 + timedelta(seconds=900), limit_seconds=900)
