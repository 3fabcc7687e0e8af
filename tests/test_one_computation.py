"""Each hour figure of a campaign's calendar is computed in exactly one function (issue 30,
docs/domain.md §7.7): the schedule, the observed reconciliation, the plan figures, the lots'
layout and the headline each have one home, and no page, report, API view or task computes them
again. Read from the source (AST), so a second computation anywhere fails here."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
APPS = ("catalog", "campaigns", "estimates", "ledger", "mlflow_api", "config")

# Called function name -> the modules allowed to call it (where the figure is computed).
ONE_HOME = {
    # Placing stages in time: the timeline's calendar (and the scheduler's own alert helper).
    "schedule": {"campaigns/domain/timeline_calendar.py", "campaigns/domain/calendar.py"},
    # Observed hours: the timeline, and the per-stage reader of the stage API and admin rows.
    "reconcile": {"campaigns/domain/timeline.py", "campaigns/selectors/observed_hours.py"},
    # The plan figures: the timeline's (planned) and the forecast's (the same names, forecast).
    "plan_figures": {"campaigns/domain/timeline.py", "estimates/domain/forecast.py"},
    # The lots on the calendar.
    "lay_out_lots": {"campaigns/domain/timeline.py"},
    # The timeline itself: built by the forecast (every surface reads that), the plan figures'
    # selector, and the hardware options' calendar on each candidate GPU; the items' fates and
    # the team's calibration read only its stages' states and observed figures, which no
    # forecast changes, so they build it without one.
    "build": {
        "estimates/domain/forecast.py",
        "campaigns/selectors/timeline.py",
        "estimates/selectors/hardware_options.py",
        "campaigns/selectors/item_fates.py",
        "estimates/selectors/calibration.py",
    },
    # The headline sentence.
    "headline": {"estimates/domain/forecast.py"},
    # The plan's warnings.
    "plan_warnings": {"estimates/domain/forecast.py"},
}
# Attributes only the scheduler and the timeline read: a makespan read elsewhere is a calendar
# length computed outside the timeline.
ONE_READER = {
    "makespan_hours": {"campaigns/domain/timeline_calendar.py", "campaigns/domain/calendar.py"}
}


def sources() -> dict[str, ast.AST]:
    out = {}
    for app in APPS:
        for path in (ROOT / app).rglob("*.py"):
            rel = path.relative_to(ROOT).as_posix()
            if "/tests/" in rel or "/migrations/" in rel:
                continue
            out[rel] = ast.parse(path.read_text())
    return out


def imports_timeline_build(tree: ast.AST) -> bool:
    return any(
        isinstance(node, ast.ImportFrom)
        and node.module == "campaigns.domain.timeline"
        and any(alias.name == "build" for alias in node.names)
        for node in ast.walk(tree)
    )


def called(node: ast.Call, tree_builds: bool) -> str | None:
    """The called name; `build` only when it is the timeline's (other builds abound)."""
    func = node.func
    if isinstance(func, ast.Name):
        return None if func.id == "build" and not tree_builds else func.id
    if isinstance(func, ast.Attribute):
        if func.attr == "build":
            owner = func.value
            return "build" if isinstance(owner, ast.Name) and owner.id == "timeline" else None
        return func.attr
    return None


def test_each_hour_figure_is_computed_in_one_place() -> None:
    found: dict[str, set[str]] = defaultdict(set)
    for rel, tree in sources().items():
        builds = imports_timeline_build(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and (name := called(node, builds)) in ONE_HOME:
                found[name].add(rel)
            if isinstance(node, ast.Attribute) and node.attr in ONE_READER:
                found[node.attr].add(rel)
    assert set(found) == set(ONE_HOME) | set(ONE_READER), "the scan finds every home"
    strays = {
        name: sorted(where - (ONE_HOME | ONE_READER)[name])
        for name, where in found.items()
        if where - (ONE_HOME | ONE_READER)[name]
    }
    assert not strays, f"computed outside its one home: {strays}"


def test_the_headline_is_written_in_one_function() -> None:
    writers = [
        rel
        for rel, tree in sources().items()
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and node.value.startswith("The calendar takes ")
    ]
    assert writers == ["estimates/domain/forecast_advice.py"]
