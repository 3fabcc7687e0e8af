"""A run's hours: measured from its own clock (docs/domain.md §5.8). Pure: no Django, no I/O.

Rule:

- A run knows when it **started** (the client's start, else its creation), when it was last
  heard from (its **heartbeat**: an explicit heartbeat, a metrics batch, a throughput report,
  a checkpoint) and when it **ended** (the client's end, else the finish; for a run that went
  silent, its last heartbeat). A resumed run is a sequence of **segments**: each ended one
  keeps its hours, the current one runs from its own start.
- **Measured hours** = the earlier segments' hours + (this segment's end − its start), never
  negative, rounded half-up to 0.01 h once, at the end. This module is the one place they are
  computed: the finish stores the result, the cost of a running run reads it up to now.
- **The run's hours** (what observed hours and the run's cost count): the hours a finish
  stated, or a person's correction, when there are any; else the measured hours.
- **Silence**: a run not heard from for `multiple` × its heartbeat interval, and at least
  `minimum` seconds, has gone silent; it is ended at its last heartbeat.

Units: hours are ``Decimal`` wall hours (0.01 h); moments are aware ``datetime``; seconds float.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import ROUND_HALF_UP, Decimal
from typing import Final, Literal

HOUR_STEP: Final = Decimal("0.01")
# The largest figure the hours columns hold (9 digits, 2 decimal places).
HOURS_MAX: Final = Decimal("9999999.99")
# A client's clock may run this far ahead of the server's: a start or end within it is taken
# as now; further ahead it is refused.
CLOCK_SKEW: Final = timedelta(minutes=5)
RUNNING: Final = "running"

Source = Literal["measured", "stated", "corrected"]


def measured_hours(
    *, started: datetime, ended: datetime, prior_hours: Decimal = Decimal(0)
) -> Decimal:
    """Earlier segments + this segment's wall hours, half-up to 0.01 h, within 0..HOURS_MAX."""
    seconds = max((ended - started).total_seconds(), 0.0)
    total = Decimal(max(prior_hours, Decimal(0))) + Decimal(repr(seconds)) / 3600
    return min(total.quantize(HOUR_STEP, rounding=ROUND_HALF_UP), HOURS_MAX)


@dataclass(frozen=True)
class RunClock:
    """What a run's hours are read from: its current segment's start and end (None while it
    runs), the earlier segments' hours, and the hours stated at its finish or corrected."""

    started: datetime
    ended: datetime | None = None
    prior_hours: Decimal = Decimal(0)
    observed_hours: Decimal | None = None


def hours_so_far(clock: RunClock, now: datetime) -> Decimal:
    """The run's hours: stated or corrected when given, else measured to its end (or to now
    while it runs)."""
    if clock.observed_hours is not None:
        return max(Decimal(clock.observed_hours), Decimal(0))
    return measured_hours(
        started=clock.started, ended=clock.ended or now, prior_hours=clock.prior_hours
    )


def ended_hours(
    *, status: str, observed_hours: Decimal | None, prior_hours: Decimal = Decimal(0)
) -> Decimal | None:
    """What an ended run took, as its row records it (the finish stored the measured figure
    unless hours were stated or corrected); None while it runs or when nothing was recorded.
    A run ended before hours were measured counts its earlier segments, if any."""
    if status == RUNNING:
        return None
    if observed_hours is not None:
        return max(Decimal(observed_hours), Decimal(0))
    return Decimal(prior_hours) if prior_hours > 0 else None


def source(
    *, observed_hours: Decimal | None, measured: Decimal | None, reason: str
) -> Source | None:
    """Where the run's hours come from: a person's correction (it has a reason), hours the
    finish stated (they differ from the measure), or the measure itself."""
    if observed_hours is None:
        return None
    if reason.strip():
        return "corrected"
    if measured is None or measured != observed_hours:
        return "stated"
    return "measured"


def checked_moment(moment: datetime, *, now: datetime, not_before: datetime, name: str) -> datetime:
    """A start or end a client sent, on the server's clock: ahead of now by at most CLOCK_SKEW
    (then taken as now), and not before `not_before`. ValueError naming `name` otherwise."""
    if moment > now + CLOCK_SKEW:
        raise ValueError(f"{name} is {moment.isoformat()}, after the server's clock ({now:%c})")
    if moment < not_before:
        raise ValueError(f"{name} is {moment.isoformat()}, before {not_before.isoformat()}")
    return min(moment, now)


def heard(current: datetime | None, at: datetime, now: datetime) -> datetime:
    """The run's heartbeat after hearing from it `at`: never ahead of now, never moving back."""
    at = min(at, now)
    return at if current is None or at > current else current


def silence_limit(*, interval: float, multiple: float, minimum: float) -> float:
    """Seconds without a heartbeat after which a run has gone silent."""
    return max(interval * multiple, minimum)


def is_silent(*, heartbeat: datetime, now: datetime, limit_seconds: float) -> bool:
    return (now - heartbeat).total_seconds() > limit_seconds
