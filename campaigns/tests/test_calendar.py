"""Calendar scheduling (campaigns.domain.calendar): seed figures, exclusivity, dependencies,
paths."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from campaigns.domain.calendar import (
    UNASSIGNED_RESOURCE,
    Schedule,
    Stage,
    resource_loads,
    schedule,
    window_alerts,
)

EPS = 1e-9


def seed_calendar(extra_hours: float = 0.0) -> list[Stage]:
    """The seed's illustrative 48 sequential hours, preparation to retrieval."""
    stages = [
        Stage(key="setup", kind="human_prep", machine=False, planned_hours=4),
        Stage(key="install", kind="setup", resource="gpu0", planned_hours=2, depends_on=("setup",)),
        Stage(
            key="load", kind="loading", resource="gpu0", planned_hours=4, depends_on=("install",)
        ),
        Stage(key="pilot", kind="pilot", resource="gpu0", planned_hours=4, depends_on=("load",)),
        Stage(
            key="train", kind="training", resource="gpu0", planned_hours=20, depends_on=("pilot",)
        ),
        Stage(
            key="val", kind="validation", resource="gpu0", planned_hours=6, depends_on=("train",)
        ),
        Stage(
            key="predict", kind="inference", resource="gpu0", planned_hours=5, depends_on=("val",)
        ),
        Stage(
            key="retrieve",
            kind="retrieval",
            machine=False,
            planned_hours=3,
            depends_on=("predict",),
        ),
    ]
    if extra_hours:
        stages.append(
            Stage(
                key="variant-b",
                kind="training",
                resource="gpu0",
                planned_hours=extra_hours,
                depends_on=("pilot",),
            )
        )
    return stages


def test_it_leaves_24_hours_uncommitted_for_48_sequential_hours_in_a_72_hour_window() -> None:
    plan = schedule(seed_calendar(), 72)
    assert plan.makespan_hours == 48
    assert plan.uncommitted_hours == 24
    assert plan.overflow_hours == 0
    assert plan.fits
    assert plan.machine_hours == {"gpu0": 41}


def test_it_overflows_by_6_hours_when_the_calendar_grows_by_30_hours() -> None:
    plan = schedule(seed_calendar(extra_hours=30), 72)
    assert plan.makespan_hours == 78
    assert plan.overflow_hours == 6
    assert plan.uncommitted_hours == -6
    assert not plan.fits
    assert plan.stages_beyond_window != ()
    alerts = window_alerts(seed_calendar(extra_hours=30), 72)
    assert any("6 h beyond the 72 h window" in a for a in alerts)


def test_it_runs_stages_on_different_gpus_in_parallel() -> None:
    plan = schedule(
        [
            Stage(key="a", resource="gpu0", planned_hours=10),
            Stage(key="b", resource="gpu1", planned_hours=10),
        ],
        72,
    )
    assert plan.entry("a").start_hours == plan.entry("b").start_hours == 0
    assert plan.makespan_hours == 10


def test_it_never_runs_two_rows_on_the_same_gpu_at_once() -> None:
    plan = schedule(
        [
            Stage(key="a", resource="gpu0", planned_hours=10),
            Stage(key="b", resource="gpu0", planned_hours=10),
        ],
        72,
    )
    assert plan.makespan_hours == 20
    assert {plan.entry("a").start_hours, plan.entry("b").start_hours} == {0, 10}


def test_it_lets_human_stages_overlap_machine_stages_on_the_same_resource() -> None:
    plan = schedule(
        [
            Stage(key="train", resource="gpu0", planned_hours=10),
            Stage(key="write-report", machine=False, resource="gpu0", planned_hours=8),
        ],
        72,
    )
    assert plan.entry("write-report").start_hours == 0
    assert plan.entry("train").start_hours == 0
    assert plan.machine_hours == {"gpu0": 10}


def test_it_treats_machine_stages_without_a_resource_as_one_shared_gpu() -> None:
    plan = schedule([Stage(key="a", planned_hours=5), Stage(key="b", planned_hours=5)], 72)
    assert plan.makespan_hours == 10
    assert plan.machine_hours == {UNASSIGNED_RESOURCE: 10}


def test_it_starts_a_stage_only_after_its_dependencies_end() -> None:
    plan = schedule(
        [
            Stage(key="c", resource="gpu1", planned_hours=1, depends_on=("a", "b")),
            Stage(key="a", resource="gpu0", planned_hours=3),
            Stage(key="b", machine=False, planned_hours=5),
        ],
        72,
    )
    assert plan.entry("c").start_hours == 5
    assert [e.key for e in plan.entries] == ["c", "a", "b"]


def test_it_refuses_a_dependency_cycle_and_names_the_stages() -> None:
    stages = [
        Stage(key="a", planned_hours=1, depends_on=("c",)),
        Stage(key="b", planned_hours=1, depends_on=("a",)),
        Stage(key="c", planned_hours=1, depends_on=("b",)),
        Stage(key="d", planned_hours=1),
    ]
    with pytest.raises(ValueError, match="cycle") as err:
        schedule(stages, 72)
    message = str(err.value)
    assert "a waits for c, c waits for b, b waits for a" in message
    assert "d" not in message.split(":")[0].split()


def test_it_refuses_a_stage_that_depends_on_itself() -> None:
    with pytest.raises(ValueError, match="a waits for a"):
        schedule([Stage(key="a", planned_hours=1, depends_on=("a",))], 72)


def test_it_refuses_an_unknown_dependency_naming_both_stages() -> None:
    with pytest.raises(ValueError, match="'train' depends on unknown 'ghost'"):
        schedule([Stage(key="train", planned_hours=1, depends_on=("ghost",))], 72)


def test_it_refuses_negative_hours() -> None:
    with pytest.raises(ValueError, match="planned_hours"):
        Stage(key="a", planned_hours=-2)
    with pytest.raises(ValueError, match="window_hours"):
        schedule([], -1)


def test_it_follows_dependencies_and_resource_waits_on_the_critical_path() -> None:
    stages = [
        Stage(key="prep", machine=False, planned_hours=2),
        Stage(key="load", resource="gpu0", planned_hours=3, depends_on=("prep",)),
        Stage(key="long", resource="gpu0", planned_hours=10, depends_on=("load",)),
        Stage(key="short", resource="gpu1", planned_hours=1, depends_on=("load",)),
        Stage(key="after-short", resource="gpu0", planned_hours=4, depends_on=("short",)),
        Stage(key="side", machine=False, planned_hours=6),
    ]
    plan = schedule(stages, 72)
    # "long" is ready at 5, before "after-short" (6), so it takes gpu0 first and the other waits.
    assert plan.entry("long").start_hours == 5
    assert plan.entry("after-short").start_hours == 15
    assert plan.makespan_hours == 19
    assert plan.critical_path == ("prep", "load", "long", "after-short")


def test_it_breaks_start_ties_by_the_longest_remaining_path() -> None:
    stages = [
        Stage(key="short", resource="gpu0", planned_hours=1),
        Stage(key="head", resource="gpu0", planned_hours=1),
        Stage(key="tail", resource="gpu1", planned_hours=20, depends_on=("head",)),
    ]
    plan = schedule(stages, 72)
    assert plan.entry("head").start_hours == 0
    assert plan.makespan_hours == 21


def test_it_alerts_when_one_gpu_is_planned_beyond_the_window() -> None:
    stages = [
        Stage(key="a", resource="gpu0", planned_hours=50),
        Stage(key="b", resource="gpu0", planned_hours=30),
        Stage(key="c", resource="gpu1", planned_hours=30),
    ]
    loads = {load.resource: load for load in resource_loads(stages, 72)}
    assert loads["gpu0"].exceeds_window
    assert loads["gpu0"].over_hours == 8
    assert not loads["gpu1"].exceeds_window
    alerts = window_alerts(stages, 72)
    assert alerts[0].startswith("gpu0: 80 h of machine stages are planned in a 72 h window, 8 h")
    assert not any(a.startswith("gpu1") for a in alerts)


def test_it_has_no_alerts_when_the_calendar_fits() -> None:
    assert window_alerts(seed_calendar(), 72) == ()


# --------------------------------------------------------------------------- properties


@st.composite
def random_dags(draw: st.DrawFn) -> list[Stage]:
    n = draw(st.integers(1, 14))
    stages = []
    for i in range(n):
        deps = draw(st.sets(st.integers(0, i - 1), max_size=3)) if i else set()
        stages.append(
            Stage(
                key=f"s{i}",
                machine=draw(st.booleans()),
                resource=draw(st.sampled_from((None, "gpu0", "gpu1", "lot-a"))),
                planned_hours=draw(st.integers(0, 40)) / 2,
                depends_on=tuple(f"s{d}" for d in sorted(deps)),
            )
        )
    # Input order should not matter for validity: shuffle it.
    return draw(st.permutations(stages))


def longest_path(stages: list[Stage]) -> float:
    by_key = {s.key: s for s in stages}
    memo: dict[str, float] = {}

    def finish(key: str) -> float:
        if key not in memo:
            s = by_key[key]
            memo[key] = s.planned_hours + max((finish(d) for d in s.depends_on), default=0.0)
        return memo[key]

    return max((finish(s.key) for s in stages), default=0.0)


@settings(max_examples=300, deadline=None, database=None)
@given(random_dags(), st.sampled_from((10.0, 48.0, 72.0)))
def test_it_never_overlaps_machine_stages_on_one_gpu_and_respects_dependencies(
    stages: list[Stage], window: float
) -> None:
    plan: Schedule = schedule(stages, window)
    by_key = {s.key: s for s in stages}
    entries = {e.key: e for e in plan.entries}
    assert set(entries) == set(by_key)
    for e in plan.entries:
        assert e.end_hours - e.start_hours == pytest.approx(by_key[e.key].planned_hours)
        for d in by_key[e.key].depends_on:
            assert e.start_hours >= entries[d].end_hours - EPS
    machine = [e for e in plan.entries if by_key[e.key].machine]
    for i, a in enumerate(machine):
        for b in machine[i + 1 :]:
            if by_key[a.key].exclusive_resource == by_key[b.key].exclusive_resource:
                overlap = min(a.end_hours, b.end_hours) - max(a.start_hours, b.start_hours)
                assert overlap <= EPS, (a, b)
    assert plan.makespan_hours == max(e.end_hours for e in plan.entries)
    assert plan.makespan_hours >= longest_path(stages) - EPS
    for hours in plan.machine_hours.values():
        assert plan.makespan_hours >= hours - EPS
    assert plan.uncommitted_hours == pytest.approx(window - plan.makespan_hours)
    assert plan.overflow_hours == pytest.approx(max(0.0, plan.makespan_hours - window))
    assert plan.fits == (plan.makespan_hours <= window + EPS)
    # The critical path is a gap-free chain from hour 0 to the makespan.
    path = [entries[k] for k in plan.critical_path]
    assert path[0].start_hours == 0
    assert path[-1].end_hours == plan.makespan_hours
    for prev, nxt in itertools.pairwise(path):
        assert prev.end_hours == nxt.start_hours
        linked = prev.key in by_key[nxt.key].depends_on or (
            by_key[prev.key].exclusive_resource is not None
            and by_key[prev.key].exclusive_resource == by_key[nxt.key].exclusive_resource
        )
        assert linked, (prev, nxt)
    assert sum(e.duration_hours for e in path) == pytest.approx(plan.makespan_hours)


@settings(max_examples=100, deadline=None, database=None)
@given(random_dags())
def test_it_schedules_deterministically(stages: list[Stage]) -> None:
    assert schedule(stages, 72) == schedule(list(stages), 72)
