"""How `make test` hands out the files: the order its xdist workers take them names files that
exist (a renamed or split slow file would otherwise drop silently to the end of the run:
conftest.py), and its serial session collects every file that holds a `serial` test."""

from __future__ import annotations

import re
from pathlib import Path

from conftest import LONGEST_FIRST

ROOT = Path(__file__).resolve().parent.parent


def test_every_file_handed_out_first_exists_once() -> None:
    missing = [path for path in LONGEST_FIRST if not (ROOT / path).is_file()]
    assert missing == []
    assert len(set(LONGEST_FIRST)) == len(LONGEST_FIRST)


SERIAL_MARK = re.compile(r"pytest\.mark\.serial\b")


def makefile_serial_tests() -> set[str]:
    found = re.search(r"^SERIAL_TESTS :?= (.+)$", (ROOT / "Makefile").read_text(), re.M)
    assert found, "the Makefile has no SERIAL_TESTS line"
    return set(found.group(1).split())


def test_the_serial_session_collects_every_file_with_a_serial_test() -> None:
    """`make test`'s second session collects only SERIAL_TESTS: a `serial` test in a file not
    listed there would run in neither session."""
    marked = {
        str(path.relative_to(ROOT))
        for top in ("campaigns", "estimates", "ledger", "mlflow_api", "tests")
        for path in sorted((ROOT / top).rglob("test_*.py"))
        if path != Path(__file__).resolve() and SERIAL_MARK.search(path.read_text())
    }
    assert marked, "no serial test found: the reader or the suite changed"
    assert makefile_serial_tests() == marked
