"""Calendar scheduling: when each stage of a campaign runs, end to end.

The rule (docs/domain.md §7): a calendar runs from the start of preparation to the
retrieval of results. Machine-occupied intervals are told apart from human preparation time.
Independent intervals may overlap, but two machine stages on the same resource (GPU or lot) never
run in parallel, however many rows they have in a table. A stage starts only after every stage it
depends on has ended.

- ``machine=True`` stages hold their ``resource`` exclusively for their whole duration. A machine
  stage without a resource is assumed to share one unnamed GPU (``UNASSIGNED_RESOURCE``) with the
  other unassigned ones: assuming parallelism nobody reserved would understate the calendar.
- ``machine=False`` stages (human preparation) hold nothing: they may overlap anything, and their
  ``resource`` is informative only.
- Seed check: 48 sequential hours in a 72 h window leave 24 h uncommitted; 30 h more reach 78 h,
  6 h beyond the window (``uncommitted_hours`` goes negative, ``overflow_hours`` is 6).

Units: hours as ``float`` from the start of the calendar (hour 0). No money here.

Method: deterministic list scheduling. Among the stages whose dependencies are all scheduled, the
one that can start earliest goes first; ties go to the longest remaining path (its own hours plus
the longest chain of stages depending on it), then to input order. Without resource contention this
gives every stage its earliest start and the makespan equals the longest dependency path. When
stages compete for a resource it is a heuristic: the order chosen on a contended GPU may not give
the shortest possible makespan (that problem is NP-hard), but no two stages on one GPU ever overlap.
"""

from __future__ import annotations

import heapq
import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType

from campaigns.domain.formatting import format_hours

UNASSIGNED_RESOURCE = "unassigned"
# Hours are floats: sums like 0.1 + 0.2 must still fit a 0.3 h window.
_EPS = 1e-9


@dataclass(frozen=True, kw_only=True)
class Stage:
    key: str
    name: str = ""
    kind: str = ""
    # True: the stage occupies its resource (a GPU or a lot) exclusively.
    machine: bool = True
    resource: str | None = None
    planned_hours: float
    depends_on: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not self.key:
            raise ValueError("a stage needs a non-empty key")
        if not math.isfinite(self.planned_hours) or self.planned_hours < 0:
            raise ValueError(
                f"stage {self.key!r}: planned_hours must be finite and >= 0, "
                f"got {self.planned_hours!r}"
            )
        if not isinstance(self.depends_on, tuple):
            # Lists arrive from serializers; freezing them keeps the dataclass hashable.
            object.__setattr__(self, "depends_on", tuple(self.depends_on))

    @property
    def exclusive_resource(self) -> str | None:
        """The resource this stage locks, or None for human stages."""
        if not self.machine:
            return None
        return self.resource if self.resource else UNASSIGNED_RESOURCE


@dataclass(frozen=True)
class ScheduledStage:
    key: str
    start_hours: float
    end_hours: float
    machine: bool
    # As given on the stage; only machine stages lock it.
    resource: str | None

    @property
    def duration_hours(self) -> float:
        return self.end_hours - self.start_hours


@dataclass(frozen=True)
class Schedule:
    # In input order.
    entries: tuple[ScheduledStage, ...]
    window_hours: float
    makespan_hours: float
    # window - makespan: negative when the calendar overflows.
    uncommitted_hours: float
    overflow_hours: float
    fits: bool
    # Dependencies and resource waits, first stage to last, that set the makespan.
    critical_path: tuple[str, ...]
    # Machine hours per exclusive resource (read-only).
    machine_hours: Mapping[str, float] = field(hash=False)

    def entry(self, key: str) -> ScheduledStage:
        for e in self.entries:
            if e.key == key:
                return e
        raise KeyError(key)

    @property
    def stages_beyond_window(self) -> tuple[str, ...]:
        """Stages that end after the window closes."""
        return tuple(e.key for e in self.entries if e.end_hours > self.window_hours + _EPS)


@dataclass(frozen=True)
class ResourceLoad:
    """Machine hours planned on one resource, against the window."""

    resource: str
    machine_hours: float
    window_hours: float
    stage_keys: tuple[str, ...]

    @property
    def over_hours(self) -> float:
        return max(0.0, self.machine_hours - self.window_hours)

    @property
    def exceeds_window(self) -> bool:
        return self.machine_hours > self.window_hours + _EPS

    @property
    def message(self) -> str:
        if not self.exceeds_window:
            return (
                f"{self.resource}: {format_hours(self.machine_hours)} h of machine stages fit the "
                f"{format_hours(self.window_hours)} h window."
            )
        return (
            f"{self.resource}: {format_hours(self.machine_hours)} h of machine stages are "
            f"planned in a {format_hours(self.window_hours)} h window, "
            f"{format_hours(self.over_hours)} h beyond it whatever the order, "
            f"since stages on one GPU never run in parallel "
            f"({', '.join(self.stage_keys)})."
        )


def _check_window(window_hours: float) -> None:
    if not math.isfinite(window_hours) or window_hours < 0:
        raise ValueError(f"window_hours must be finite and >= 0, got {window_hours!r}")


def _find_cycle(remaining: set[str], deps: Mapping[str, tuple[str, ...]]) -> list[str]:
    """One dependency cycle among stages Kahn's algorithm could not order."""
    # Every remaining stage has a remaining dependency, so walking them must revisit a stage.
    start = min(remaining)
    seen: dict[str, int] = {}
    path: list[str] = []
    node = start
    while node not in seen:
        seen[node] = len(path)
        path.append(node)
        node = min(d for d in deps[node] if d in remaining)
    return [*path[seen[node] :], node]


def _key_index(stages: Sequence[Stage]) -> dict[str, int]:
    """Each stage's position by key; a key used twice is an error (dependencies name keys)."""
    index: dict[str, int] = {}
    for i, s in enumerate(stages):
        if s.key in index:
            raise ValueError(f"duplicate stage key {s.key!r}")
        index[s.key] = i
    return index


def _check_known(stages: Sequence[Stage], index: Mapping[str, int]) -> None:
    """Every dependency names a stage of the plan; all unknown ones are named at once."""
    unknown = [
        f"{s.key!r} depends on unknown {', '.join(repr(d) for d in s.depends_on if d not in index)}"
        for s in stages
        if any(d not in index for d in s.depends_on)
    ]
    if unknown:
        raise ValueError("unknown dependency: " + "; ".join(unknown))


def _kahn(
    stages: Sequence[Stage], index: Mapping[str, int], deps: Mapping[str, tuple[str, ...]]
) -> tuple[list[int], list[int]]:
    """Kahn's algorithm: the order it finds and each stage's dependencies left unplaced."""
    indegree = [len(deps[s.key]) for s in stages]
    children: list[list[int]] = [[] for _ in stages]
    for i, s in enumerate(stages):
        for d in deps[s.key]:
            children[index[d]].append(i)
    queue = [i for i, n in enumerate(indegree) if n == 0]
    order: list[int] = []
    while queue:
        i = queue.pop()
        order.append(i)
        for c in children[i]:
            indegree[c] -= 1
            if indegree[c] == 0:
                queue.append(c)
    return order, indegree


def _topological_order(stages: Sequence[Stage]) -> list[int]:
    """Validate keys and dependencies; return stage indices in a dependency-respecting order."""
    index = _key_index(stages)
    _check_known(stages, index)
    deps = {s.key: tuple(dict.fromkeys(s.depends_on)) for s in stages}
    order, indegree = _kahn(stages, index, deps)
    if len(order) != len(stages):
        # Stages Kahn left unplaced wait on each other: name one cycle so it can be broken.
        remaining = {s.key for i, s in enumerate(stages) if indegree[i] > 0}
        cycle = _find_cycle(remaining, deps)
        waits = ", ".join(f"{a} waits for {b}" for a, b in itertools.pairwise(cycle))
        raise ValueError(f"dependency cycle between stages {', '.join(cycle[:-1])}: {waits}")
    return order


@dataclass(frozen=True)
class _Graph:
    """The stages by position: each one's dependencies and dependants, and its longest
    remaining path with resources ignored (the priority that keeps long chains moving)."""

    deps: list[tuple[int, ...]]
    children: list[list[int]]
    tail: list[float]


@dataclass
class _Placement:
    """Each stage's start and end, and the stage that held its resource just before it."""

    start: list[float]
    end: list[float]
    resource_prev: list[int | None]


def _graph(stages: Sequence[Stage]) -> _Graph:
    order = _topological_order(stages)
    n = len(stages)
    index = {s.key: i for i, s in enumerate(stages)}
    deps = [tuple(index[d] for d in dict.fromkeys(s.depends_on)) for s in stages]
    children: list[list[int]] = [[] for _ in range(n)]
    for i in range(n):
        for d in deps[i]:
            children[d].append(i)
    tail = [0.0] * n
    for i in reversed(order):
        tail[i] = stages[i].planned_hours + max((tail[c] for c in children[i]), default=0.0)
    return _Graph(deps, children, tail)


def _place(stages: Sequence[Stage], graph: _Graph) -> _Placement:
    """List scheduling: the ready stage that can start first, the longest tail breaking ties."""
    n = len(stages)
    ready_at = [0.0] * n
    waiting = [len(d) for d in graph.deps]
    resource_free: dict[str, float] = {}
    resource_last: dict[str, int] = {}
    placed = _Placement([0.0] * n, [0.0] * n, [None] * n)

    def earliest(i: int) -> float:
        res = stages[i].exclusive_resource
        free = resource_free.get(res, 0.0) if res is not None else 0.0
        return max(ready_at[i], free)

    # Keys are lower bounds (a resource only gets busier), so a popped stage whose key is still
    # current is the true minimum; stale ones go back with their new start.
    heap = [(earliest(i), -graph.tail[i], i) for i in range(n) if waiting[i] == 0]
    heapq.heapify(heap)
    while heap:
        est, neg_tail, i = heapq.heappop(heap)
        actual = earliest(i)
        if actual > est:
            heapq.heappush(heap, (actual, neg_tail, i))
            continue
        placed.start[i] = actual
        placed.end[i] = actual + stages[i].planned_hours
        res = stages[i].exclusive_resource
        if res is not None:
            placed.resource_prev[i] = resource_last.get(res)
            resource_free[res] = placed.end[i]
            resource_last[res] = i
        for c in graph.children[i]:
            ready_at[c] = max(ready_at[c], placed.end[i])
            waiting[c] -= 1
            if waiting[c] == 0:
                heapq.heappush(heap, (earliest(c), -graph.tail[c], c))
    return placed


def _critical_path(stages: Sequence[Stage], graph: _Graph, placed: _Placement) -> list[str]:
    """Back from the last stage to end, through whatever made each stage wait: a dependency
    ending when it starts, else the stage before it on its resource."""
    n = len(stages)
    start, end = placed.start, placed.end
    critical: list[str] = []
    if not n:
        return critical
    node: int | None = max(range(n), key=lambda i: (end[i], -i))
    while node is not None:
        critical.append(stages[node].key)
        if start[node] <= 0.0:
            break
        cause = next((d for d in graph.deps[node] if end[d] == start[node]), None)
        if cause is None:
            prev = placed.resource_prev[node]
            cause = prev if prev is not None and end[prev] == start[node] else None
        node = cause
    critical.reverse()
    return critical


def schedule(stages: Sequence[Stage], window_hours: float) -> Schedule:
    """Place every stage in time; see the module docstring for the rules and the heuristic."""
    _check_window(window_hours)
    graph = _graph(stages)
    placed = _place(stages, graph)
    makespan = max(placed.end, default=0.0)
    hours_by_resource: dict[str, float] = {}
    for s in stages:
        res = s.exclusive_resource
        if res is not None:
            hours_by_resource[res] = hours_by_resource.get(res, 0.0) + s.planned_hours
    entries = tuple(
        ScheduledStage(s.key, placed.start[i], placed.end[i], s.machine, s.resource)
        for i, s in enumerate(stages)
    )
    return Schedule(
        entries=entries,
        window_hours=window_hours,
        makespan_hours=makespan,
        uncommitted_hours=window_hours - makespan,
        overflow_hours=max(0.0, makespan - window_hours),
        fits=makespan <= window_hours + _EPS,
        critical_path=tuple(_critical_path(stages, graph, placed)),
        machine_hours=MappingProxyType(dict(sorted(hours_by_resource.items()))),
    )


def resource_loads(stages: Sequence[Stage], window_hours: float) -> tuple[ResourceLoad, ...]:
    """Machine hours per resource against the window, sorted by resource.

    A resource whose own stages add up past the window overflows whatever the schedule, because
    stages on one GPU never run in parallel; this needs no scheduling and no valid dependencies.
    """
    _check_window(window_hours)
    hours: dict[str, float] = {}
    keys: dict[str, list[str]] = {}
    for s in stages:
        res = s.exclusive_resource
        if res is None:
            continue
        hours[res] = hours.get(res, 0.0) + s.planned_hours
        keys.setdefault(res, []).append(s.key)
    return tuple(
        ResourceLoad(res, hours[res], window_hours, tuple(keys[res])) for res in sorted(hours)
    )


def window_alerts(stages: Sequence[Stage], window_hours: float) -> tuple[str, ...]:
    """Plain-word alerts: resources planned beyond the window, then the calendar's own overflow.

    The calendar can overflow even when every resource fits, because dependencies chain stages
    across resources; that alert names the critical path.
    """
    alerts = [load.message for load in resource_loads(stages, window_hours) if load.exceeds_window]
    plan = schedule(stages, window_hours)
    if not plan.fits:
        alerts.append(
            f"The calendar ends at {format_hours(plan.makespan_hours)} h, "
            f"{format_hours(plan.overflow_hours)} h beyond the {format_hours(window_hours)} h "
            f"window (critical path: "
            f"{' -> '.join(plan.critical_path)})."
        )
    return tuple(alerts)
