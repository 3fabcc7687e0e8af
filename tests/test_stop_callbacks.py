"""The training-loop callbacks' stop watch (campaign_desk_client/callbacks.py) follows the grace
the rule states (docs/domain.md §4.6): the loop ends where the server stops taking its logging."""

from __future__ import annotations

from typing import Any

from campaign_desk_client.callbacks import StopWatch


class Desk:
    """Answers GET /runs/{id}/ with a stop carrying the grace fields the server sends."""

    def __init__(self, **grace: Any) -> None:
        self.stop = {"rule": 3, "reason": "loss is NaN at step 20", "step": 20, **grace}

    def get_run(self, run_id: str) -> dict[str, Any]:
        return {"status": "stopped", "stop": self.stop}


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def watch(desk: Desk, clock: Clock | None = None, **options: Any) -> StopWatch:
    return StopWatch(run_id="r", desk=desk, every_seconds=0, clock=clock or Clock(), **options)  # type: ignore[arg-type]


def test_without_a_grace_the_loop_ends_at_the_step_the_stop_is_seen() -> None:
    stop = watch(Desk(grace_until_step=None, grace_seconds_left=None))
    assert stop.due(21)


def test_a_step_grace_lets_the_loop_run_to_the_last_step_the_server_takes() -> None:
    stop = watch(Desk(grace_until_step=25, grace_seconds_left=None))
    assert [stop.due(step) for step in (21, 24, 25)] == [False, False, True]


def test_a_stop_seen_after_the_grace_ends_the_loop_at_once() -> None:
    stop = watch(Desk(grace_until_step=25, grace_seconds_left=None))
    assert stop.due(40)


def test_a_minute_grace_ends_the_loop_when_the_seconds_the_server_counted_are_over() -> None:
    clock = Clock()
    stop = watch(Desk(grace_until_step=None, grace_seconds_left=90.0), clock)
    assert not stop.due(21)
    clock.now += 89
    assert not stop.due(5000)
    clock.now += 1
    assert stop.due(5001)


def test_with_both_limits_the_loop_ends_at_the_first_one_reached() -> None:
    clock = Clock()
    stop = watch(Desk(grace_until_step=25, grace_seconds_left=600.0), clock)
    assert not stop.due(22)
    clock.now += 600
    assert stop.due(23)


def test_grace_steps_given_to_the_callback_override_the_rules() -> None:
    stop = watch(Desk(grace_until_step=100, grace_seconds_left=None), grace_steps=2)
    assert [stop.due(step) for step in (30, 31, 32)] == [False, False, True]
