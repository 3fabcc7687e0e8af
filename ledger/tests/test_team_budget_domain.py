"""The team budget's arithmetic, without a database (docs/domain.md §22)."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ledger.domain import team_budget as tb

NOW = datetime(2026, 2, 10, 12, tzinfo=UTC)
Q1 = tb.Allowance(kind="quarter", start=date(2026, 1, 1), amount=Decimal("15000"), currency="USD")


def test_periods_and_labels() -> None:
    assert tb.period_bounds("quarter", date(2026, 5, 17)) == (
        datetime(2026, 4, 1, tzinfo=UTC),
        datetime(2026, 7, 1, tzinfo=UTC),
    )
    assert tb.period_bounds("month", date(2026, 12, 3))[1] == datetime(2027, 1, 1, tzinfo=UTC)
    assert tb.period_label("quarter", date(2026, 10, 1)) == "2026-Q4"
    assert tb.parse_period("2026-Q4") == ("quarter", date(2026, 10, 1))
    assert tb.parse_period("2026-03") == ("month", date(2026, 3, 1))
    for bad in ("2026", "2026-Q5", "2026-13", "x-01", ""):
        with pytest.raises(ValueError, match="YYYY-MM or YYYY-Qn"):
            tb.parse_period(bad)
    assert tb.is_period_start("quarter", date(2026, 4, 1))
    assert not tb.is_period_start("quarter", date(2026, 5, 1))


def test_the_worked_example_by_hand() -> None:
    """12,000 committed in lots, 500 posted, one hourly run of 4 GPUs at 2.50/GPU-h since
    24 h ago and forecast to end in 100 h: spent 500 + 240, forecast + 1,000 more."""
    charges = [
        tb.Charge(
            at=datetime(2026, 1, 5, tzinfo=UTC),
            amount=Decimal("12000"),
            currency="USD",
            committed=True,
        ),
        tb.Charge(at=datetime(2026, 2, 1, tzinfo=UTC), amount=Decimal("500"), currency="USD"),
        # Another quarter and another currency are not this allowance's.
        tb.Charge(at=datetime(2026, 4, 2, tzinfo=UTC), amount=Decimal("999"), currency="USD"),
        tb.Charge(at=datetime(2026, 2, 2, tzinfo=UTC), amount=Decimal("7"), currency="EUR"),
    ]
    burns = [
        tb.Burn(
            since=NOW - timedelta(hours=24),
            money_per_hour=Decimal("10"),
            currency="USD",
            gpus=4,
            until=NOW + timedelta(hours=100),
        ),
    ]
    [budget] = tb.team_budget([Q1], charges, burns, NOW)
    assert budget.money is not None
    assert budget.money.spent == Decimal("740.00")
    assert budget.money.committed == Decimal("12000.00")
    assert budget.money.forecast == Decimal("13740.00")
    assert budget.money.left == Decimal("2260.00")
    assert budget.run_out_at == NOW + timedelta(hours=226)
    assert budget.other_currencies == ("EUR",)
    assert not budget.forecast_exceeds
    assert "2026-Q1: forecast 13,740.00 USD of a 15,000.00 USD allowance" in tb.describe(budget)


def test_gpu_hours_per_gpu_model() -> None:
    allowance = tb.Allowance(
        kind="month", start=date(2026, 2, 1), gpu_hours=Decimal("100"), gpu_model="RTX-4090"
    )
    charges = [
        tb.Charge(
            at=NOW,
            amount=Decimal(1),
            currency="USD",
            gpu_hours=Decimal("72"),
            gpu_model="NVIDIA RTX 4090",
            committed=True,
        ),
        tb.Charge(
            at=NOW,
            amount=Decimal(1),
            currency="USD",
            gpu_hours=Decimal("144"),
            gpu_model="B200",
            committed=True,
        ),
    ]
    [budget] = tb.team_budget([allowance], charges, [], NOW)
    assert budget.money is None and budget.gpu_hours is not None
    assert budget.gpu_hours.committed == Decimal("72.00")
    assert budget.gpu_hours.left == Decimal("28.00")


def test_a_commit_that_takes_the_forecast_over_is_named() -> None:
    extra = [tb.Charge(at=NOW, amount=Decimal("16000"), currency="USD", committed=True)]
    assert tb.exceeded_by([Q1], [], [], [], NOW) == []
    [(before, after)] = tb.exceeded_by([Q1], [], [], extra, NOW)
    assert before.money is not None and after.money is not None
    assert (before.money.forecast, after.money.forecast) == (Decimal("0.00"), Decimal("16000.00"))
    # A commit in another period does not touch this one.
    later = [tb.Charge(at=NOW + timedelta(days=90), amount=Decimal("16000"), currency="USD")]
    assert tb.exceeded_by([Q1], [], [], later, NOW) == []


money = st.decimals(min_value=0, max_value=10**6, places=2, allow_nan=False)
offsets = st.integers(min_value=-200 * 24, max_value=200 * 24)


@st.composite
def charges(draw: st.DrawFn) -> tb.Charge:
    return tb.Charge(
        at=NOW + timedelta(hours=draw(offsets)),
        amount=draw(money),
        currency="USD",
        committed=draw(st.booleans()),
    )


@st.composite
def burns(draw: st.DrawFn) -> tb.Burn:
    since = NOW - timedelta(hours=draw(st.integers(0, 2000)))
    until = draw(st.none() | st.integers(0, 3000).map(lambda h: NOW + timedelta(hours=h)))
    return tb.Burn(since=since, money_per_hour=draw(money) / 100, currency="USD", until=until)


@settings(max_examples=60, deadline=None)
@given(st.lists(charges(), max_size=8), st.lists(burns(), max_size=3))
def test_left_plus_spent_plus_committed_is_the_allowance(
    found: list[tb.Charge], burning: list[tb.Burn]
) -> None:
    [budget] = tb.team_budget([Q1], found, burning, NOW)
    m = budget.money
    assert m is not None
    assert m.left + m.spent + m.committed == m.allowance
    assert m.forecast >= m.spent + m.committed
    if budget.run_out_at is not None:
        assert NOW <= budget.run_out_at < budget.end


@settings(max_examples=60, deadline=None)
@given(st.lists(charges(), max_size=8), charges())
def test_a_charge_counts_once_in_its_own_period_only(
    found: list[tb.Charge], extra: tb.Charge
) -> None:
    [before] = tb.team_budget([Q1], found, [], NOW)
    [after] = tb.team_budget([Q1], [*found, extra], [], NOW)
    assert before.money is not None and after.money is not None
    inside = before.start <= extra.at < before.end
    grown = (after.money.spent + after.money.committed) - (
        before.money.spent + before.money.committed
    )
    assert grown == (extra.amount if inside else 0)


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 2000), st.decimals(min_value=0, max_value=100, places=2))
def test_a_burn_split_over_months_adds_up_to_its_whole(hours_ago: int, rate: Decimal) -> None:
    burn = tb.Burn(
        since=NOW - timedelta(hours=hours_ago), money_per_hour=rate, currency="USD", until=NOW
    )
    months = [
        tb.Allowance(kind="month", start=date(y, m, 1), amount=Decimal(0), currency="USD")
        for y, m in [(2025, 11), (2025, 12), (2026, 1), (2026, 2)]
    ]
    spent = sum(b.money.spent for b in tb.team_budget(months, [], [burn], NOW) if b.money)
    assert abs(spent - rate * hours_ago) <= Decimal("0.02")
