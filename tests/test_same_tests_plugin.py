"""The like-for-like timing plugin (bench/suite/same_tests.py) runs exactly the tests a
baseline listing names, by function name, renamed ones included, and an empty selection passes."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.suite.same_tests import RENAMED

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parent.parent

MODULE = """
import pytest

def test_kept_from_the_baseline():
    pass

def test_added_since():
    pass

@pytest.mark.parametrize("n", [1, 2, 3])
def test_parametrised_in_the_baseline(n):
    pass

def test_every_other_operation_answers_within_its_schema_and_never_5xx():
    pass
"""

# What `pytest --collect-only -q` printed in the baseline: other paths, one parametrised case,
# and the fuzzing test under its old name.
LISTING = """\
old/tests/test_moved.py::Cls::test_kept_from_the_baseline
old/tests/test_moved.py::test_parametrised_in_the_baseline[1]
campaigns/tests/test_schema.py::test_every_operation_answers_within_its_schema_and_never_5xx
c/test_schema.py::test_every_operation_answers_within_its_schema_and_never_5xx[GET /x/]

909 tests collected in 6.03s
"""


def run(pytester: pytest.Pytester, module: str) -> pytest.RunResult:
    pytester.makepyfile(test_suite=module)
    listing = pytester.path / "baseline-tests.txt"
    listing.write_text(LISTING)
    return pytester.runpytest_inprocess(
        "-p", "no:django", "-p", "no:xdist", "-p", "bench.suite.same_tests",
        "--same-tests-as", str(listing),
    )  # fmt: skip


def test_it_runs_the_baselines_tests_by_name_with_every_case_and_the_renamed_one(
    pytester: pytest.Pytester,
) -> None:
    result = run(pytester, MODULE)
    result.assert_outcomes(passed=5, deselected=1)
    assert result.ret == pytest.ExitCode.OK


def test_a_session_with_none_of_them_passes_instead_of_finding_nothing(
    pytester: pytest.Pytester,
) -> None:
    result = run(pytester, "def test_added_since():\n    pass\n")
    result.assert_outcomes(deselected=1)
    assert result.ret == pytest.ExitCode.OK


def test_the_present_names_of_renamed_tests_are_the_suites() -> None:
    sources = "\n".join(path.read_text() for path in ROOT.glob("*/tests/test_*.py"))
    for new_names in RENAMED.values():
        for name in new_names:
            assert f"\n{name} =" in sources or f"def {name}(" in sources, name
