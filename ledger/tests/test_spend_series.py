"""Spend over time: pure tests of the series, projection, lot windows and chart
(ledger/domain/spend.py)."""

from datetime import UTC, datetime, timedelta
from decimal import Decimal

from hypothesis import given
from hypothesis import strategies as st

from ledger.domain.spend import (
    LotWindow,
    Posting,
    burn_chart,
    cumulative_series,
    hours_between,
    lot_windows,
    project,
)

T0 = datetime(2026, 11, 30, 8, 0, tzinfo=UTC)


def test_the_series_is_cumulative_in_time_order_and_ends_now_with_the_accrual() -> None:
    later = T0 + timedelta(hours=5)
    series = cumulative_series(
        [Posting(T0 + timedelta(hours=2), Decimal("12.00")), Posting(T0, Decimal("47.14"))],
        Decimal("3.50"),
        later,
    )
    assert series == [
        (T0, Decimal("47.14")),
        (T0 + timedelta(hours=2), Decimal("59.14")),
        (later, Decimal("62.64")),
    ]


@given(
    amounts=st.lists(st.decimals(min_value=0, max_value=1000, places=2), max_size=20),
    accrual=st.decimals(min_value=0, max_value=1000, places=2),
)
def test_the_last_point_is_every_posting_plus_the_accrual_counted_once(
    amounts: list[Decimal], accrual: Decimal
) -> None:
    postings = [Posting(T0 + timedelta(minutes=i), a) for i, a in enumerate(amounts)]
    series = cumulative_series(postings, accrual, T0 + timedelta(days=1))
    assert series[-1][1] == sum(amounts, Decimal(0)) + accrual
    assert [v for _, v in series] == sorted(v for _, v in series)


def test_a_projection_states_its_range_and_what_it_assumes() -> None:
    now = T0 + timedelta(hours=10)
    p = project(Decimal("20"), Decimal("4.00"), now, T0 + timedelta(hours=20), T0 + timedelta(72))
    assert p is not None
    assert (p.amount, p.low) == (Decimal("60.00"), Decimal("20.00"))
    assert p.high > p.amount
    assert "keep their GPUs for the 10.00 h to the forecast end" in p.uncertainty
    flat = project(Decimal("47.14"), Decimal(0), now, None, T0 + timedelta(hours=72))
    assert flat is not None and flat.amount == flat.high == Decimal("47.14")
    assert "no forecast has landed" in flat.uncertainty and "paid up front" in flat.uncertainty
    assert project(Decimal("1"), Decimal("1"), now, None, None) is None


def test_lot_windows_count_down_from_their_start() -> None:
    now = T0 + timedelta(hours=60)
    rows = lot_windows(
        [
            LotWindow(T0, Decimal("72")),
            LotWindow(T0 + timedelta(hours=100), Decimal("72")),
            LotWindow(None, Decimal("24")),
            LotWindow(T0 - timedelta(days=10), Decimal("72")),
        ],
        now,
    )
    assert [r["hours_left"] for r in rows] == ["12.00", "72.00", "24.00", "0.00"]
    assert rows[0]["end"] == (T0 + timedelta(hours=72)).isoformat()
    assert rows[2]["start"] is None
    assert hours_between(now, T0) == 0


def test_the_chart_draws_the_budget_line_above_a_smaller_spend() -> None:
    series = [(T0, Decimal("47.14")), (T0 + timedelta(hours=3), Decimal("50.00"))]
    chart = burn_chart(series, Decimal("110.00"), None, "USD")
    assert chart.budget_y is not None
    spent_y = float(chart.spend_path.split(",")[-1])
    assert chart.budget_y < spent_y  # SVG y grows downwards: the budget is higher up
    assert chart.title == "spent 50.00 USD of a 110.00 USD budget"
    assert chart.projection_path == ""
