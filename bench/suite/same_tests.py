"""A pytest plugin for timing the suite like for like (issue 16: `make test` against the suite
at the issue's filing): it keeps only the tests a baseline commit also has.

`make test` today holds every test the baseline held and those added since; timing the two
suites whole compares different work. With this plugin `make test` runs only the tests whose
function names appear in the baseline's `pytest --collect-only -q` listing (names, not paths:
issue 16 moved and renamed the test files; a parametrised test keeps all its cases). A test
the baseline had under another name is listed in `RENAMED`. An empty selection (the serial
session, whose tests are all newer) exits 0 rather than pytest's 5: with this filter, nothing
to run is an answer. bench/README.md "The suite's time" says how to run it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

# The baseline's name -> the names its test has now.
RENAMED = {
    # One schema-fuzzing test, split in two files so that two workers share it.
    "test_every_operation_answers_within_its_schema_and_never_5xx": (
        "test_every_campaign_operation_answers_within_its_schema_and_never_5xx",
        "test_every_other_operation_answers_within_its_schema_and_never_5xx",
    ),
}


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--same-tests-as",
        metavar="LISTING",
        required=True,
        help="a baseline's `pytest --collect-only -q` output: run only the tests it names",
    )


def function_names(listing: str) -> set[str]:
    """The test function names of a `--collect-only -q` listing, the renamed ones under their
    present names."""
    names = {
        line.strip().split("::")[-1].split("[")[0] for line in listing.splitlines() if "::" in line
    }
    for old, new in RENAMED.items():
        if old in names:
            names.update(new)
    return names


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    names = function_names(Path(config.getoption("same_tests_as")).read_text())
    kept: list[pytest.Item] = []
    dropped: list[pytest.Item] = []
    for item in items:
        (kept if getattr(item, "originalname", item.name) in names else dropped).append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
    items[:] = kept


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    # Whatever emptied the session: under xdist the controller, which sets the exit status,
    # never sees the workers' deselection.
    if exitstatus == pytest.ExitCode.NO_TESTS_COLLECTED:
        session.exitstatus = pytest.ExitCode.OK
