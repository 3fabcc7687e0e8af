from itertools import product

from hypothesis import given
from hypothesis import strategies as st

from campaigns.domain.grid_warning import grid_warning


def test_it_warns_about_a_full_rank_by_precision_by_learning_rate_grid() -> None:
    configs = [
        {"rank": r, "precision": p, "lr": lr}
        for r, p, lr in product([8, 64], ["bf16", "fp32"], [1e-4, 2e-4])
    ]
    warning = grid_warning(configs)
    assert warning is not None
    assert "full grid over lr × precision × rank (8 combinations)" in warning


def test_it_accepts_a_small_set_that_isolates_one_cause() -> None:
    configs = [
        {"rank": 16, "lr": 2e-4},
        {"rank": 64, "lr": 2e-4},
        {"rank": 16, "lr": 1e-4},
        {"rank": 16, "lr": 5e-5},
    ]
    # 4 of the 6 combinations of (rank, lr): one factor varied at a time, not a grid.
    assert grid_warning(configs) is None


def test_it_says_nothing_about_three_variants_or_fewer() -> None:
    assert grid_warning([{"a": 1, "b": 1}, {"a": 2, "b": 2}, {"a": 1, "b": 2}]) is None


@given(
    st.lists(st.integers(1, 4), min_size=2, max_size=3).flatmap(
        lambda sizes: st.just([list(range(n)) for n in sizes])
    )
)
def test_every_complete_grid_of_two_or_more_varying_keys_is_flagged(axes: list[list[int]]) -> None:
    configs = [dict(zip("abc", combo, strict=False)) for combo in product(*axes)]
    varying = sum(1 for axis in axes if len(axis) >= 2)
    warning = grid_warning(configs)
    if len(configs) >= 4 and varying >= 2:
        assert warning is not None
    else:
        assert warning is None
