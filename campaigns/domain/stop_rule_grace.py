"""A stop rule's grace (docs/domain.md §4.6), pure: how long a loop may go on after its rule
fired, so it can reach and save a checkpoint. ``grace_steps`` optimizer steps after the firing
step and ``grace_minutes`` wall minutes after the stop (0: not given); the window closes at the
first limit given that is reached. Re-exported by campaigns/domain/stop_rules.py.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

# Bounds of a rule's grace: a week of minutes, a million steps. Beyond them a grace is a typo,
# and each minute of grace is rented time.
MAX_GRACE_STEPS: Final = 1_000_000
MAX_GRACE_MINUTES: Final = 7 * 24 * 60


@dataclass(frozen=True)
class Grace:
    """How long a loop may go on after its rule fired (0 = not given, for either)."""

    steps: int = 0
    minutes: int = 0

    @property
    def given(self) -> bool:
        return self.steps > 0 or self.minutes > 0

    def __str__(self) -> str:
        parts = [f"{self.steps} steps"] if self.steps else []
        parts += [f"{self.minutes} minutes"] if self.minutes else []
        return " or ".join(parts) if parts else "no grace"


NO_GRACE: Final = Grace()


def grace_problems(steps: object, minutes: object) -> tuple[str, ...]:
    """Why a grace is unusable, in words naming the field; empty when it is fine."""
    problems: list[str] = []
    for field, value, limit in (
        ("grace_steps", steps, MAX_GRACE_STEPS),
        ("grace_minutes", minutes, MAX_GRACE_MINUTES),
    ):
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= limit:
            problems.append(f"{field} must be a whole number from 0 to {limit:,}, not {value!r}")
    return tuple(problems)


def grace_until_step(grace: Grace, stop_step: int | None) -> int | None:
    """The last step a stopped run still takes, or None when the grace counts no steps."""
    if not grace.steps:
        return None
    return (stop_step or 0) + grace.steps


def grace_seconds_left(grace: Grace, seconds_since_stop: float) -> float | None:
    """Seconds until the grace's minutes are over (0 when over), None when it counts none."""
    if not grace.minutes:
        return None
    return max(grace.minutes * 60 - seconds_since_stop, 0.0)


def within_grace(
    grace: Grace, *, stop_step: int | None, last_step: int, seconds_since_stop: float
) -> bool:
    """Whether a stopped run still takes a write reaching ``last_step``, this long after the
    stop. Without a grace, never; with one, while every limit it gives still holds."""
    if not grace.given:
        return False
    until = grace_until_step(grace, stop_step)
    if until is not None and last_step > until:
        return False
    left = grace_seconds_left(grace, seconds_since_stop)
    return left is None or left > 0
