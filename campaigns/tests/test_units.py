"""The project's one hours formatter and one money formatter (campaigns/domain/formatting.py),
without a
database."""

from __future__ import annotations

from decimal import Decimal

from hypothesis import given
from hypothesis import strategies as st

from campaigns.domain.formatting import (
    format_hours,
    format_hours_fixed,
    format_hours_short,
    format_money,
    format_percent,
)


def test_hours_drop_trailing_zeros_and_never_show_minus_zero() -> None:
    assert format_hours(Decimal("48.00")) == "48"
    assert format_hours(22.5) == "22.5"
    assert format_hours(Decimal("0.125")) == "0.13"  # half-up to the hundredth
    assert format_hours(-0.001) == "0"


def test_money_is_cents_half_up_and_never_minus_zero() -> None:
    assert format_money(Decimal("47.1")) == "47.10"
    assert format_money(Decimal("23.565")) == "23.57"
    assert format_money(Decimal("-0.004")) == "0.00"


@given(st.decimals(min_value=-(10**12), max_value=10**12, allow_nan=False, places=6))
def test_money_reads_back_as_the_amount_rounded_to_the_cent(amount: Decimal) -> None:
    shown = Decimal(format_money(amount))
    assert abs(shown - amount) <= Decimal("0.005")
    assert shown == shown.quantize(Decimal("0.01"))


@given(st.decimals(min_value=0, max_value=10**6, allow_nan=False, places=4))
def test_hours_read_back_within_half_a_hundredth(hours: Decimal) -> None:
    assert abs(Decimal(format_hours(hours)) - hours) <= Decimal("0.005")


def test_fixed_hours_keep_two_decimals_and_pass_none_through() -> None:
    assert format_hours_fixed(48) == "48.00"
    assert format_hours_fixed(48.0) == "48.00"
    assert format_hours_fixed(Decimal("0.125")) == "0.12"  # half-even, Decimal's default
    assert format_hours_fixed(None) is None


def test_percent_is_one_decimal_and_undefined_of_nothing() -> None:
    assert format_percent(Decimal(-3), Decimal(12)) == "-25.0"
    assert format_percent(Decimal(1), Decimal(0)) is None


def test_short_hours_are_tenths_for_chart_labels() -> None:
    assert format_hours_short(48.0) == "48"
    assert format_hours_short(2.25) == "2.2"
    assert format_hours_short(0.0) == "0"
