"""Run cost accrual and campaign spend: pure tests, no database (campaigns/domain/run_cost.py)."""

from datetime import UTC, datetime, timedelta
from decimal import Decimal

from hypothesis import given
from hypothesis import strategies as st

from campaigns.domain.run_cost import (
    LotPrice,
    Rate,
    RunAccrual,
    campaign_spend,
    cost_at_step,
    cost_at_time,
    effective_rate,
    lot_rate,
    money,
    run_cost,
    same_gpu,
    unposted_accrual,
)
from campaigns.domain.run_hours import RunClock
from campaigns.domain.stop_rules import StopRuleSpec, evaluate_spend, rule_problems

RTX_3_DAYS = LotPrice(Decimal("47.14"), 1, Decimal("72"), 1, "RTX-4090")
B200_3_DAYS = LotPrice(Decimal("648.00"), 1, Decimal("72"), 2, "B200")
T0 = datetime(2026, 11, 30, 8, 0, tzinfo=UTC)


def test_a_two_gpu_lot_is_priced_per_gpu_hour_not_twice() -> None:
    assert lot_rate([B200_3_DAYS]) == Decimal("4.5000")
    # 10 h on both GPUs of the lot: 20 GPU-hours, 90.00, not 180.00.
    assert run_cost(Decimal("10"), 2, Rate(Decimal("4.5"), "lot_share")) == Decimal("90.00")


def test_the_lot_share_follows_the_gpu_the_item_needs() -> None:
    assert lot_rate([RTX_3_DAYS, B200_3_DAYS], "B200") == Decimal("4.5000")
    assert lot_rate([RTX_3_DAYS, B200_3_DAYS], "NVIDIA RTX 4090") == Decimal("0.6547")
    # Unnamed or unknown GPU: the mean over every lot, (47.14 + 648) / (72 + 144) GPU-hours.
    assert lot_rate([RTX_3_DAYS, B200_3_DAYS], "") == Decimal("3.2182")
    assert same_gpu("rtx 4090", "RTX-4090") and not same_gpu("", "")


def test_lots_win_over_an_hourly_rate_and_nothing_prices_nothing() -> None:
    assert effective_rate([RTX_3_DAYS], Decimal("2.00")) == Rate(Decimal("0.6547"), "lot_share")
    assert effective_rate([], Decimal("2.00")) == Rate(Decimal("2.00"), "hourly")
    assert effective_rate([], None) is None


def test_spend_adds_only_unposted_hourly_accrual_to_the_ledger() -> None:
    runs = [
        RunAccrual(Decimal("30.00"), "lot_share", False),
        RunAccrual(Decimal("12.00"), "hourly", True),
        RunAccrual(Decimal("5.50"), "hourly", False),
    ]
    assert unposted_accrual(runs) == Decimal("5.50")
    assert campaign_spend(Decimal("59.14"), runs) == Decimal("64.64")


hours = st.decimals(min_value=0, max_value=500, places=2)


@given(
    shares=st.lists(st.tuples(hours, st.integers(1, 8)), min_size=1, max_size=8),
    ledger=st.decimals(min_value=0, max_value=10_000, places=2),
)
def test_lot_shares_never_add_to_the_spend(
    shares: list[tuple[Decimal, int]], ledger: Decimal
) -> None:
    rate = Rate(lot_rate([B200_3_DAYS]) or Decimal(0), "lot_share")
    runs = [RunAccrual(run_cost(h, g, rate), "lot_share", False) for h, g in shares]
    assert campaign_spend(ledger, runs) == ledger


@given(
    runs=st.lists(st.tuples(hours, st.integers(1, 8)), min_size=1, max_size=8),
    posted=st.data(),
    rate=st.decimals(min_value=0, max_value=50, places=2),
)
def test_posting_a_finished_hourly_run_moves_its_cost_never_doubles_it(
    runs: list[tuple[Decimal, int]], posted: st.DataObject, rate: Decimal
) -> None:
    costs = [run_cost(h, g, Rate(rate, "hourly")) for h, g in runs]
    before = campaign_spend(Decimal(0), [RunAccrual(c, "hourly", False) for c in costs])
    done = posted.draw(st.lists(st.booleans(), min_size=len(costs), max_size=len(costs)))
    ledger = sum((c for c, d in zip(costs, done, strict=True) if d), Decimal(0))
    after = campaign_spend(
        ledger, [RunAccrual(c, "hourly", d) for c, d in zip(costs, done, strict=True)]
    )
    assert after == before == money(sum(costs, Decimal(0)))


@given(
    lots=st.lists(
        st.builds(
            LotPrice,
            price=st.decimals(min_value=1, max_value=5000, places=2),
            quantity=st.integers(1, 4),
            duration_hours=st.decimals(min_value=1, max_value=720, places=0),
            gpus_per_lot=st.integers(1, 8),
        ),
        min_size=1,
        max_size=4,
    )
)
def test_filling_every_gpu_hour_of_the_lots_allocates_their_price(lots: list[LotPrice]) -> None:
    rate = lot_rate(lots)
    assert rate is not None
    total_gpu_hours = sum((lot.gpu_hours for lot in lots), Decimal(0))
    total_price = sum((lot.total_price for lot in lots), Decimal(0))
    allocated = run_cost(total_gpu_hours, 1, Rate(rate, "lot_share"))
    # The rate is kept to 0.0001 per GPU-hour: the allocation is the price within that rounding.
    assert abs(allocated - total_price) <= total_gpu_hours * Decimal("0.00005") + Decimal("0.01")


BUDGET_RULE = StopRuleSpec(id=4, kind="budget_overrun")


def test_the_budget_rule_fires_strictly_beyond_its_fraction_and_names_the_figures() -> None:
    assert evaluate_spend([BUDGET_RULE], Decimal("100.00"), Decimal("100.00"), "USD") is None
    firing = evaluate_spend([BUDGET_RULE], Decimal("120.00"), Decimal("100.00"), "USD")
    assert firing is not None and firing.rule_id == 4
    assert firing.reason == (
        "budget: spent 120.00 USD is beyond 100% of the budget 100.00 USD by 20.00 USD "
        "(rule #4: budget or time overrun)"
    )
    at_80 = StopRuleSpec(id=5, kind="budget_overrun", threshold=0.8)
    firing = evaluate_spend([at_80], Decimal("80.01"), Decimal("100.00"))
    assert firing is not None and "beyond 80% of the budget 100.00 by 0.01" in firing.reason
    assert evaluate_spend([at_80], Decimal("1000"), None) is None


def test_a_budget_threshold_is_a_positive_fraction() -> None:
    assert rule_problems("budget_overrun", "", None, 0.0)
    assert rule_problems("budget_overrun", "", None, float("nan"))
    assert not rule_problems("budget_overrun", "", None, 0.8)


def test_a_finished_runs_cost_is_spread_over_its_steps() -> None:
    assert cost_at_step(0, 1000, Decimal("12.00")) == 0
    assert cost_at_step(250, 1000, Decimal("12.00")) == Decimal("3.00")
    assert cost_at_step(5000, 1000, Decimal("12.00")) == Decimal("12.00")
    assert cost_at_step(7, 0, Decimal("12.00")) == Decimal("12.00")


def test_a_running_runs_point_costs_the_time_it_had_run() -> None:
    rate = Rate(Decimal("2.00"), "hourly")
    assert cost_at_time(T0 + timedelta(minutes=90), RunClock(T0), 2, rate) == Decimal("6.00")
    # A resumed run's earlier segments count too: 1 h before, 1.5 h since.
    resumed = RunClock(T0, prior_hours=Decimal("1"))
    assert cost_at_time(T0 + timedelta(minutes=90), resumed, 2, rate) == Decimal("10.00")


@given(steps=st.lists(st.integers(0, 10_000), min_size=1), last=st.integers(1, 10_000))
def test_point_costs_never_pass_the_runs_cost_and_grow_with_the_step(
    steps: list[int], last: int
) -> None:
    spread = [cost_at_step(s, last, Decimal("99.99")) for s in sorted(steps)]
    assert spread == sorted(spread) and spread[-1] <= Decimal("99.99")
