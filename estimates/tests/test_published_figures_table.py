"""The published-figures table (estimates/tests/published/): every case within the tolerance
its own words justify, each citing its source; and the intervals' coverage measured on it
(docs/domain.md §24.12)."""

from __future__ import annotations

import pytest

from estimates.domain.formulas.intervals import BANDS, band_from_residuals
from estimates.tests.published import CASES, INTERVAL_KINDS, Case


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_the_estimate_of_a_published_figure_is_within_its_tolerance(case: Case) -> None:
    assert case.source and case.why
    estimated = case.estimate()
    assert estimated == pytest.approx(case.published, rel=case.tolerance, abs=1e-9), (
        f"{case.id}: estimated {estimated:,.4g}, published {case.published:,.4g} "
        f"({100 * (estimated / case.published - 1):+.1f}%); {case.why}"
    )


def test_the_table_names_each_case_once() -> None:
    ids = [case.id for case in CASES]
    assert len(ids) == len(set(ids))


def _residuals() -> dict[str, list[float]]:
    found: dict[str, list[float]] = {}
    for case in CASES:
        if case.kind in INTERVAL_KINDS and not case.anchor:
            found.setdefault(case.kind, []).append(case.residual())
    return found


def test_each_kinds_band_is_the_one_its_residuals_give() -> None:
    """docs/domain.md §24.12: BANDS hold (mean, sd, count) of ln(published / estimated) per
    kind; a change to a formula that moves a residual must move its band with it."""
    found = _residuals()
    assert set(found) == set(BANDS) == set(INTERVAL_KINDS)
    for kind, residuals in found.items():
        derived = band_from_residuals(residuals)
        assert BANDS[kind].cases == derived.cases, kind
        assert BANDS[kind].mean == pytest.approx(derived.mean, abs=5e-5), kind
        assert BANDS[kind].sd == pytest.approx(derived.sd, abs=5e-5), kind


@pytest.mark.parametrize("kind", INTERVAL_KINDS)
def test_the_80_percent_intervals_contain_70_to_90_percent_of_the_published_figures(
    kind: str,
) -> None:
    """Leave-one-out: each figure against the interval the other figures of its kind give."""
    residuals = _residuals()[kind]
    inside = 0
    for i, residual in enumerate(residuals):
        band = band_from_residuals(residuals[:i] + residuals[i + 1 :])
        inside += abs(residual - band.mean) <= band.half_width
    assert 0.7 <= inside / len(residuals) <= 0.9, (kind, inside, len(residuals))
