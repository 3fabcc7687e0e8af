"""The published-figures table (estimates/tests/published/): every case within the tolerance
its own words justify, each citing its source; and the intervals' coverage measured on it
(docs/domain.md §24)."""

from __future__ import annotations

import pytest

from estimates.tests.published import CASES, Case


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_the_estimate_of_a_published_figure_is_within_its_tolerance(case: Case) -> None:
    assert case.source and case.why
    estimated = case.estimate()
    assert estimated == pytest.approx(case.published, rel=case.tolerance), (
        f"{case.id}: estimated {estimated:,.4g}, published {case.published:,.4g} "
        f"({100 * (estimated / case.published - 1):+.1f}%); {case.why}"
    )


def test_the_table_names_each_case_once() -> None:
    ids = [case.id for case in CASES]
    assert len(ids) == len(set(ids))
