"""Observed over planned hours per kind of stage (pure)."""

from __future__ import annotations

from decimal import Decimal

import pytest

from ledger.domain.cost_per_deliverable import KindRatio, StageHours, ratios_by_kind


def h(kind: str, planned: str, observed: str | None) -> StageHours:
    return StageHours(kind, Decimal(planned), Decimal(observed) if observed is not None else None)


def test_it_sums_hours_per_kind_rather_than_averaging_stage_ratios() -> None:
    ratios = ratios_by_kind([h("training", "20", "24"), h("training", "1", "2")])
    # (24 + 2) / (20 + 1), not the mean of 1.2 and 2.0.
    assert ratios == (KindRatio("training", 2, Decimal("21"), Decimal("26"), Decimal("1.24")),)


def test_stages_never_observed_are_left_out() -> None:
    ratios = ratios_by_kind([h("setup", "2", "2.5"), h("training", "10", None)])
    assert [r.kind for r in ratios] == ["setup"]
    assert ratios[0].ratio == Decimal("1.25")


def test_kinds_come_sorted_and_an_unplanned_kind_has_no_ratio() -> None:
    ratios = ratios_by_kind([h("validation", "0", "3"), h("loading", "4", "2")])
    assert [(r.kind, r.ratio) for r in ratios] == [
        ("loading", Decimal("0.50")),
        ("validation", None),
    ]


def test_negative_or_float_hours_are_refused() -> None:
    with pytest.raises(ValueError):
        ratios_by_kind([h("setup", "2", "-1")])
    with pytest.raises(ValueError):
        ratios_by_kind([StageHours("setup", 2.0, Decimal("1"))])  # type: ignore[arg-type]
