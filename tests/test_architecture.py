"""The code's shape, checked: apps are layers and no two files import each other.

docs/domain.md §17: `campaigns` is the bottom layer, `estimates` sits on
it, `ledger` on top; the MLflow facade (`mlflow_api`) sits on `campaigns` only. A module imports
from its own app and the layers below, never above: not at module level, not inside a function,
not under TYPE_CHECKING, not through `apps.get_model`. Upper apps hook in with signals and template
tags. Tests and benchmarks may import any layer; application code may not.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

# What each app may import from (its own app is always allowed).
ALLOWED: dict[str, set[str]] = {
    "catalog": set(),
    "campaigns": {"catalog"},
    "estimates": {"catalog", "campaigns"},
    "mlflow_api": {"catalog", "campaigns"},
    "ledger": {"catalog", "campaigns", "estimates"},
    "campaign_desk_client": set(),
    # The project package wires the apps together (urls, settings, celery).
    "config": {"catalog", "campaigns", "estimates", "ledger", "mlflow_api"},
}
APPS = set(ALLOWED)


def project_modules() -> list[Path]:
    paths = []
    for app in sorted(APPS):
        base = ROOT / app
        if not base.is_dir():
            continue
        for path in sorted(base.rglob("*.py")):
            parts = path.relative_to(ROOT).parts
            if "tests" in parts or "migrations" in parts:
                continue
            paths.append(path)
    return paths


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports_of(path: Path) -> list[tuple[int, str]]:
    """Every module named by an import anywhere in the file (functions and TYPE_CHECKING
    included), plus the app labels of `apps.get_model("label", ...)` calls."""
    tree = ast.parse(path.read_text(), filename=str(path))
    package = module_name(path)
    if path.name != "__init__.py":
        package = package.rpartition(".")[0]
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)] if node.level > 1 else base
                target = ".".join([*base, node.module] if node.module else base)
            else:
                target = node.module or ""
            found.append((node.lineno, target))
            # `from . import tasks` names a module too.
            found += [(node.lineno, f"{target}.{alias.name}") for alias in node.names]
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "get_model"
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            label = node.args[0].value.partition(".")[0]
            found.append((node.lineno, label))
    return found


def test_there_are_modules_to_check() -> None:
    names = {module_name(p) for p in project_modules()}
    assert {"campaigns.models", "estimates.domain.formulas", "ledger.models"} <= names


def test_every_import_points_down_the_layers() -> None:
    wrong = []
    for path in project_modules():
        app = path.relative_to(ROOT).parts[0]
        for line, target in imports_of(path):
            other = target.partition(".")[0]
            if other in APPS and other != app and other not in ALLOWED[app]:
                wrong.append(f"{path.relative_to(ROOT)}:{line} imports {target}")
    assert not wrong, "imports against the layers:\n" + "\n".join(wrong)


def test_no_two_files_import_each_other() -> None:
    modules = {module_name(p): p for p in project_modules()}
    graph: dict[str, set[str]] = defaultdict(set)
    for name, path in modules.items():
        for _line, target in imports_of(path):
            # `from .models import X` also names `models.X`: keep the longest known module.
            while target and target not in modules:
                target = target.rpartition(".")[0]
            if target and target != name and not name.startswith(target + "."):
                graph[name].add(target)
    cycles = []
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                cycles.append(" -> ".join([*stack[stack.index(nxt) :], nxt]))
            elif nxt not in state:
                visit(nxt)
        stack.pop()
        state[node] = 2

    for node in sorted(modules):
        if node not in state:
            visit(node)
    assert not cycles, "import cycles between files:\n" + "\n".join(cycles)


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("from ledger.models import X\n", "ledger.models"),
        ("def f():\n    from estimates import forecasts\n", "estimates.forecasts"),
        ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import ledger\n", "ledger"),
        ("def f(apps):\n    apps.get_model('ledger', 'Report')\n", "ledger"),
    ],
)
def test_the_import_reader_sees_every_form_of_import(
    tmp_path: Path, source: str, expected: str
) -> None:
    path = ROOT / "campaigns" / "_probe_for_architecture_test.py"
    try:
        path.write_text(source)
        assert expected in {target for _line, target in imports_of(path)}
    finally:
        path.unlink()
