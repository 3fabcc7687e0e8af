"""Inside each app, folders are layers too (issue 35; docs/architecture.md §2): domain < charts <
models < selectors < services and tasks < api, admin, views. A folder (or top-level module) imports
only its own layer's peers and the layers below it, and no folders import each other, even
through a third (a loop of folders is read as one tangle, however it is spelled). The file-level
check of tests/test_architecture.py sees two files importing each other; this sees folders.

Every top-level folder or module of an app has a rank below; a new one fails here until it is
given one (where it goes is docs/architecture.md's "where a new thing goes")."""

from __future__ import annotations

from collections import defaultdict

import pytest

from tests.test_architecture import ROOT, imports_of, project_modules

# The rank of each top-level folder or module of an app (lower ranks are imported by higher).
RANKS: dict[str, int] = {
    # Pure rules and their drawings (no Django: tests/test_architecture.py checks it).
    "domain": 0,
    "charts": 1,
    # What every layer above may use: validators of fields, the facade's error answers, the
    # outbound address policy, the Redis connection, the dependency probes.
    "validators": 1,
    "errors": 1,
    "outbound": 1,
    "redis_client": 1,
    "dependencies": 1,
    "models": 2,
    # Reading.
    "selectors": 3,
    "shapes": 3,
    # Delivery and the service's own metrics and exports, which services call.
    "transports": 3,
    "operations": 3,
    # The one way to enqueue after commit (a Celery task class), which tasks are made of.
    "enqueue": 3,
    # Writing, and the work done after commit.
    "services": 4,
    "tasks": 4,
    "signals": 4,
    "forecasts": 4,
    "auth": 4,
    "uploads": 4,
    "rendering": 4,
    "events": 4,
    # The surfaces: HTTP, the admin, pages, commands.
    "api": 5,
    "admin": 5,
    "views": 5,
    "templatetags": 5,
    "management": 5,
    "links": 5,
    # Wiring.
    "urls": 6,
    "apps": 6,
    "__init__": 6,
    "static": 6,
}
APPS = ("catalog", "campaigns", "estimates", "ledger", "mlflow_api")


def folder_of(parts: tuple[str, ...]) -> str:
    """`campaigns/services/runs.py` -> `services`; `ledger/tasks.py` -> `tasks`."""
    return parts[1].removesuffix(".py") if len(parts) > 1 else "__init__"


def folder_imports() -> dict[tuple[str, str], dict[str, list[str]]]:
    """(app, folder) -> the folders of the same app it imports -> where."""
    found: dict[tuple[str, str], dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    for path in project_modules():
        parts = path.relative_to(ROOT).parts
        if parts[0] not in APPS:
            continue
        source = folder_of(parts)
        for line, target in imports_of(path):
            names = target.split(".")
            if names[0] != parts[0] or len(names) < 2 or names[1] == source:
                continue
            found[(parts[0], source)][names[1]].append(f"{path.relative_to(ROOT)}:{line}")
    return found


def test_every_folder_of_every_app_has_a_rank() -> None:
    unranked = sorted(
        f"{app}/{entry.name}"
        for app in APPS
        for entry in (ROOT / app).iterdir()
        if entry.name not in ("tests", "migrations", "__pycache__", "py.typed")
        # A folder a move left holding only __pycache__ is no folder of the app.
        and ((entry.is_dir() and any(entry.rglob("*.py"))) or entry.suffix == ".py")
        and entry.name.removesuffix(".py") not in RANKS
    )
    assert not unranked, f"give these a rank in RANKS (docs/architecture.md): {unranked}"


def test_no_folder_imports_a_folder_above_it() -> None:
    upward = [
        f"{app}/{source} (rank {RANKS[source]}) imports {app}/{target} (rank {RANKS[target]}) "
        f"at {', '.join(where[:3])}"
        for (app, source), targets in sorted(folder_imports().items())
        for target, where in sorted(targets.items())
        if source in RANKS and target in RANKS and RANKS[target] > RANKS[source]
    ]
    assert not upward, "imports up the layers inside an app:\n" + "\n".join(upward)


def loops_of(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one folder (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(edges.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return groups


@pytest.mark.parametrize(
    ("edges", "loops"),
    [
        ({"a": {"b"}, "b": {"c"}, "c": {"a"}}, [["a", "b", "c"]]),
        ({"a": {"b"}, "b": {"c"}}, []),
        ({"api": {"views"}, "views": {"api"}, "services": {"models"}}, [["api", "views"]]),
    ],
)
def test_the_loop_reader_finds_loops_through_a_third_folder(
    edges: dict[str, set[str]], loops: list[list[str]]
) -> None:
    assert loops_of(edges) == loops


def test_no_folders_of_an_app_sit_in_a_loop() -> None:
    by_app: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    where: dict[tuple[str, str, str], list[str]] = {}
    for (app, source), targets in folder_imports().items():
        for target, lines in targets.items():
            by_app[app][source].add(target)
            where[(app, source, target)] = lines
    found = []
    for app, edges in sorted(by_app.items()):
        for group in loops_of(edges):
            arrows = [
                f"{a} -> {b} ({where[(app, a, b)][0]})"
                for a in group
                for b in group
                if b in edges.get(a, ())
            ]
            found.append(f"{app}: {', '.join(arrows)}")
    assert not found, "folders that import each other:\n" + "\n".join(found)
