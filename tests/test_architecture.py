"""The code's shape, checked (docs/architecture.md, docs/domain.md §17).

- Apps are layers: `catalog` < `campaigns` < `estimates` < `ledger`; the MLflow facade
  (`mlflow_api`) sits on `campaigns` and `catalog`. A module imports from its own app and the
  layers below, never above: not at module level, not inside a function, not under
  TYPE_CHECKING, not through `apps.get_model`. Upper apps hook in with signals and template
  tags. Tests and benchmarks may import any layer; application code may not.
- No two files import each other.
- `domain/` and `charts/` are pure: no Django, DRF, Celery, database driver or network import,
  and only other pure modules of the project.
- Services are the only writers: every other module (admin, API, commands, tasks, template tags,
  selectors, models, views, single sign-on, reports) calls them rather than saving, creating,
  updating or deleting rows itself.
- No application function is over 60 lines nor over complexity 15 (radon's count), and no
  module over 450 lines.
- Every `§N` the code and docs cite is a section of docs/domain.md, whose contents list every
  section.
"""

from __future__ import annotations

import ast
import functools
import os
import re
from collections import defaultdict
from collections.abc import Iterator
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


@functools.cache
def parsed(source: str) -> ast.Module:
    """Each module is parsed once for all the readers below (the suite's several tests read
    the same few hundred files)."""
    return ast.parse(source)


@functools.cache
def imports_of(path: Path) -> list[tuple[int, str]]:
    """Every module named by an import anywhere in the file (functions and TYPE_CHECKING
    included), plus the app labels of `apps.get_model("label", ...)` calls."""
    return imports_in(path.read_text(), module_name(path), package=path.name == "__init__.py")


def imports_in(source: str, module: str, *, package: bool = False) -> list[tuple[int, str]]:
    """imports_of for `source`, read as the module named `module` (a package's __init__ when
    `package`): relative imports resolve against it."""
    tree = parsed(source)
    base_package = module if package else module.rpartition(".")[0]
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = base_package.split(".")
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
        ("from ..models import Run\n", "campaigns.models.Run"),
        ("from . import tasks\n", "campaigns.api.tasks"),
    ],
)
def test_the_import_reader_sees_every_form_of_import(source: str, expected: str) -> None:
    found = {target for _line, target in imports_in(source, "campaigns.api.probe")}
    assert expected in found


# --- Pure layers --------------------------------------------------------------------------------

# Frameworks, the database and the network: none of it in a pure module (`open` is not checked).
IMPURE = (
    "django",
    "rest_framework",
    "drf_spectacular",
    "celery",
    "kombu",
    "redis",
    "pgtrigger",
    "psycopg",
    "psycopg2",
    "requests",
    "httpx",
    "urllib",
    "http.client",
    "socket",
)


# Pure-layer modules that still import a framework, each with the reason; delete an entry once
# the module is pure (the test fails on an entry that imports nothing impure).
IMPURE_ALLOWED: dict[str, str] = {}


def is_pure(name: str) -> bool:
    """A `domain` or `charts` module (or package) of any app."""
    return len(name.split(".")) >= 2 and name.split(".")[1] in {"domain", "charts"}


def pure_modules() -> list[Path]:
    return [p for p in project_modules() if is_pure(module_name(p))]


def test_there_are_pure_modules_to_check() -> None:
    names = {module_name(p) for p in pure_modules()}
    assert {"campaigns.domain.stop_rules", "campaigns.charts.gantt"} <= names
    assert any(n.startswith("estimates.domain.formulas") for n in names)


def test_domain_and_charts_import_no_framework_database_or_network() -> None:
    wrong = []
    impure = set()
    for path in pure_modules():
        for line, target in imports_of(path):
            if any(target == bad or target.startswith(bad + ".") for bad in IMPURE):
                impure.add(str(path.relative_to(ROOT)))
                if str(path.relative_to(ROOT)) not in IMPURE_ALLOWED:
                    wrong.append(f"{path.relative_to(ROOT)}:{line} imports {target}")
    assert not wrong, "pure modules importing frameworks or I/O:\n" + "\n".join(wrong)
    stale = sorted(set(IMPURE_ALLOWED) - impure)
    assert not stale, f"IMPURE_ALLOWED entries that are pure now: delete them: {stale}"


def test_domain_and_charts_import_only_pure_project_modules() -> None:
    """A pure module importing `campaigns.models` (say) would bring Django in through it."""
    wrong = []
    for path in pure_modules():
        for line, target in imports_of(path):
            app = target.partition(".")[0]
            if app in APPS and app != "campaign_desk_client" and not is_pure(target):
                # `from campaigns.domain import x` names the package, then `....x`: both pure.
                wrong.append(f"{path.relative_to(ROOT)}:{line} imports {target}")
    assert not wrong, "pure modules importing impure project modules:\n" + "\n".join(wrong)


# --- Services are the only writers -------------------------------------------------------------

WRITE_METHODS = {
    "save",
    "create",
    "update",
    "delete",
    "bulk_create",
    "bulk_update",
    "get_or_create",
    "update_or_create",
}
# Receivers whose `.save(` / `.update(` / `.delete(` are not rows: a parent class's method (a
# DRF view's `create` handler), a dict, a hash, file storage.
NOT_A_ROW = re.compile(r"^super\(\)$|__dict__$|sha256$|hash$|digest$|(^|\.)default_storage$")

# Files outside the services that still write rows, each with the reason. Keep it short: move
# the write into a service and delete the entry (the test fails on an entry that writes nothing).
WRITES_ALLOWED: dict[str, str] = {
    "ledger/api/views.py": "serializer.save() runs the serializers' create(), which call "
    "ledger.services (post_entry, reverse_entry, submit_deliverable)",
}


def outside_services(path: Path) -> bool:
    """Every module but the services (a `services/` folder or a `services.py`), the migrations
    and the tests; `domain/` and `charts/` too, though their purity (below) already rules out a
    model, and the client package (no Django: its `.update(` calls are dicts)."""
    parts = set(path.relative_to(ROOT).with_suffix("").parts)
    if path.relative_to(ROOT).parts[0] == "campaign_desk_client":
        return False
    return not parts & {"services", "migrations", "tests", "domain", "charts"}


def writes_in(source: str) -> list[tuple[int, str]]:
    found = []
    for node in ast.walk(parsed(source)):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in WRITE_METHODS
        ):
            receiver = ast.unparse(node.func.value)
            if not NOT_A_ROW.search(receiver):
                found.append((node.lineno, f"{receiver}.{node.func.attr}("))
    return found


@pytest.mark.parametrize(
    ("source", "writes"),
    [
        ("Run.objects.filter(pk=1).update(status='x')\n", True),
        ("campaign.lots.create(plan=plan)\n", True),
        ("obj.save(update_fields=['a'])\n", True),
        ("Team.objects.get_or_create(name='x')\n", True),
        ("MetricPoint.objects.bulk_create(rows)\n", True),
        ("super().create(request)\n", False),
        ("self.sha256.update(chunk)\n", False),
        ("default_storage.save(name, f)\n", False),
    ],
)
def test_the_write_reader_tells_rows_from_other_things(source: str, writes: bool) -> None:
    assert bool(writes_in(source)) is writes


@pytest.mark.parametrize(
    ("path", "scanned"),
    [
        ("campaigns/models/ingest_keys.py", True),
        ("campaigns/selectors/timeline.py", True),
        ("ledger/reports/__init__.py", True),
        ("config/settings.py", True),
        ("campaigns/services/runs.py", False),
        ("catalog/services.py", False),
        ("campaigns/migrations/0001_initial.py", False),
        ("campaigns/domain/timeline.py", False),
    ],
)
def test_every_module_but_the_services_is_scanned_for_writes(path: str, scanned: bool) -> None:
    assert outside_services(ROOT / path) is scanned


def test_nothing_outside_the_services_writes_a_model() -> None:
    scanned = [p for p in project_modules() if outside_services(p)]
    for where in (
        "campaigns/admin/*.py",
        "campaigns/models/*.py",
        "*/selectors/*.py",
        "*/tasks.py",
    ):
        assert any(p.match(where) for p in scanned), where
    writers: dict[str, list[str]] = {}
    for path in scanned:
        found = writes_in(path.read_text())
        if found:
            writers[str(path.relative_to(ROOT))] = [f"{line}: {call}" for line, call in found]
    unexplained = {path: calls for path, calls in writers.items() if path not in WRITES_ALLOWED}
    assert not unexplained, "writes outside the services (call a service instead):\n" + "\n".join(
        f"{path}:{call}" for path, calls in unexplained.items() for call in calls
    )
    stale = sorted(set(WRITES_ALLOWED) - set(writers))
    assert not stale, f"WRITES_ALLOWED entries that no longer write: delete them: {stale}"


# --- Function length ---------------------------------------------------------------------------

MAX_FUNCTION_LINES = 60
# Functions over the limit today, being split (issue 16 item 2): delete an entry once its
# function is split (the test fails on an entry that is short or gone). Add none.
LONG_FUNCTIONS_ALLOWED: set[str] = set()


def functions_in(source: str) -> Iterator[tuple[str, int]]:
    """(qualified name, length in lines, decorators excluded) of every function and method."""

    def walk(node: ast.AST, prefix: str) -> Iterator[tuple[str, int]]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                name = prefix + child.name
                yield name, (child.end_lineno or child.lineno) - child.lineno + 1
                yield from walk(child, name + ".")
            elif isinstance(child, ast.ClassDef):
                yield from walk(child, prefix + child.name + ".")
            else:
                yield from walk(child, prefix)

    yield from walk(parsed(source), "")


def test_the_function_reader_measures_methods_and_nested_functions() -> None:
    source = "class A:\n    def f(self):\n        def g():\n            pass\n        return g\n"
    assert dict(functions_in(source)) == {"A.f": 4, "A.f.g": 2}


def test_no_application_function_is_over_60_lines() -> None:
    long: dict[str, int] = {}
    for path in project_modules():
        for name, lines in functions_in(path.read_text()):
            if lines > MAX_FUNCTION_LINES:
                long[f"{path.relative_to(ROOT)}::{name}"] = lines
    new = {name: lines for name, lines in long.items() if name not in LONG_FUNCTIONS_ALLOWED}
    assert not new, "functions over 60 lines (split into load / compute / explain):\n" + "\n".join(
        f"{name}: {lines} lines" for name, lines in sorted(new.items())
    )
    done = sorted(LONG_FUNCTIONS_ALLOWED - set(long))
    assert not done, f"LONG_FUNCTIONS_ALLOWED entries now short or gone: delete them: {done}"


MAX_MODULE_LINES = 450
MAX_COMPLEXITY = 15


def test_no_application_module_is_over_450_lines() -> None:
    big = {
        str(path.relative_to(ROOT)): lines
        for path in project_modules()
        if (lines := len(path.read_text().splitlines())) > MAX_MODULE_LINES
    }
    assert not big, f"modules over {MAX_MODULE_LINES} lines (one module per concept): {big}"


def test_no_application_function_is_over_complexity_15_as_radon_counts_it() -> None:
    from radon.complexity import cc_visit

    tangled = {
        f"{path.relative_to(ROOT)}::{block.fullname}": block.complexity
        for path in project_modules()
        for block in cc_visit(path.read_text())
        if block.complexity > MAX_COMPLEXITY and not hasattr(block, "methods")
    }
    assert not tangled, f"functions over complexity {MAX_COMPLEXITY} (radon cc): {tangled}"


def test_the_complexity_reader_counts_boolean_operators() -> None:
    from radon.complexity import cc_visit

    source = "def f(a, b, c):\n    if a and b or c:\n        return 1\n    return 0\n"
    (block,) = cc_visit(source)
    assert block.complexity == 4


# --- docs/domain.md sections -------------------------------------------------------------------

DOMAIN = ROOT / "docs" / "domain.md"
CITATION = re.compile(r"§ ?(\d+(?:\.\d+)*)")
CITING_SUFFIXES = {".py", ".md", ".html", ".txt", ".toml", ".yml", ".yaml", ".cfg", ".sh"}
NOT_OURS = {".git", ".venv", "build", "staticfiles", "media", "node_modules", ".mypy_cache"}


def domain_sections(text: str) -> tuple[set[str], set[str]]:
    """(sections, subsections): `## N. Title` headings, and `N.M` paragraphs or headings."""
    sections = set(re.findall(r"^## (\d+)\. ", text, re.M))
    subsections = set(re.findall(r"^(?:#+ )?(\d+\.\d+)[ .]", text, re.M))
    return sections, subsections


def our_files() -> Iterator[Path]:
    """Every file of the repository outside NOT_OURS, whose directories are not entered (the
    virtualenv alone holds ~90,000 paths)."""
    for directory, subdirectories, names in os.walk(ROOT):
        # Every virtualenv (.venv, and .venv-focus that `make focus-validator` makes) is not ours.
        subdirectories[:] = [
            d for d in subdirectories if d not in NOT_OURS and not d.startswith(".venv")
        ]
        yield from (Path(directory) / name for name in names)


def citations() -> dict[str, list[str]]:
    """Every `§N` or `§N.M` cited in the repository's text files, with where."""
    found: dict[str, list[str]] = defaultdict(list)
    for path in sorted(our_files()):
        rel = path.relative_to(ROOT)
        if path.suffix not in CITING_SUFFIXES or not path.is_file():
            continue
        for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            for cited in CITATION.findall(line):
                found[cited].append(f"{rel}:{number}")
    return found


def test_every_cited_section_exists_in_docs_domain_md() -> None:
    sections, subsections = domain_sections(DOMAIN.read_text())
    cited = citations()
    assert len(cited) > 20  # the reader works
    missing = {
        number: where
        for number, where in cited.items()
        if number not in (subsections if "." in number else sections)
    }
    assert not missing, "cited but not in docs/domain.md:\n" + "\n".join(
        f"§{number}: {', '.join(where[:5])}" for number, where in sorted(missing.items())
    )


def test_the_contents_of_docs_domain_md_list_every_section() -> None:
    text = DOMAIN.read_text()
    sections, _ = domain_sections(text)
    contents = re.search(r"^Contents:(.*?)\n\n", text, re.M | re.S)
    assert contents, "docs/domain.md opens with a 'Contents:' paragraph"
    listed = set(re.findall(r"§(\d+)\b", contents.group(1)))
    assert listed == sections, (
        f"contents list {sorted(listed - sections, key=int)} that are not sections, and miss "
        f"{sorted(sections - listed, key=int)}"
    )
