"""Published figures: memory (filled in below)."""

from __future__ import annotations

from estimates.tests.published.cases import Case

CASES: tuple[Case, ...] = ()
