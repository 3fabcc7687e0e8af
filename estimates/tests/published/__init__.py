"""The published-figures table: runs and measurements others published, each with its source,
the estimate the formulas give for it, and the tolerance the case's own words justify.

``CASES`` feeds ``test_published_figures_table`` (each case within its tolerance) and the
intervals' derivation (docs/domain.md §24.12): the residual ln(published / estimate) of every
case of an interval kind that is not an anchor (a figure a constant was read from).
"""

from __future__ import annotations

from estimates.tests.published.assumed import CASES as ASSUMED
from estimates.tests.published.cases import INTERVAL_KINDS, Case
from estimates.tests.published.communication import CASES as COMMUNICATION
from estimates.tests.published.decisions import CASES as DECISIONS
from estimates.tests.published.memory import CASES as MEMORY
from estimates.tests.published.projection import CASES as PROJECTION

CASES: tuple[Case, ...] = (*ASSUMED, *COMMUNICATION, *MEMORY, *PROJECTION, *DECISIONS)

__all__ = ["CASES", "INTERVAL_KINDS", "Case"]
