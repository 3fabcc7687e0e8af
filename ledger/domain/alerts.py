"""Which alert conditions hold for a campaign now, and the words of every alert kind (pure: no
Django, no I/O; docs/domain.md §19).

Each condition has a `key` naming what it is about (the lot, the budget share, the checkpoint,
the run): the store keeps one open alert per (kind, key), so a scan every few minutes never
repeats one, and an alert whose condition no longer holds is resolved.

- ``lot_ending``: a lot ends within ``lot_hours`` (default 12) while runs are running.
- ``checkpoint_not_retrieved``: a lot ends within ``lot_hours`` (or has ended) and the latest
  verified checkpoint of the campaign was not copied off the rented machine.
- ``budget``: spend reached 80% of the budget, then 100% (two conditions, each raised once).
- ``calendar_slack``: the landed forecast runs past the window (slack below zero).
- ``run_silent``: a running run logged nothing for longer than ``silence_factor`` × its own
  logging interval (the mean gap between its points), and at least ``min_silence_minutes``.
- ``idle_gpu``: every GPU of a running run stayed under ``idle.percent`` utilisation for the last
  ``idle.minutes`` minutes: its ``system/gpu_*_utilization_percentage`` points (from the client's
  NVML sampler or MLflow's system metrics) span the window and none of them reached the
  threshold. The campaign's ``idle_gpu`` stop rule sets both figures (and then the run is
  stopped); without one, 5% for 30 minutes.
- ``metric_threshold``: a running run's metric crossed a threshold its team set (any point:
  the run's finite minimum or maximum is compared, so a spike between two scans counts).

Events are alerts too, raised by the service that saw them, resolved as they are raised:
``run_stopped`` (a rule or a person stopped a run), ``run_failed``, ``run_finished``.
``team_budget`` is raised by the team-budget scan (§22.4).

A new kind is a `Kind` in `KINDS` (its words) and, when a scan finds it, a function in
`CONDITIONS` over `CampaignFacts`. Units: hours and minutes of wall time; money `Decimal` in the
campaign's currency; metric values floats.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from decimal import ROUND_HALF_UP, Decimal
from typing import Final

from campaigns.domain.formatting import format_money
from campaigns.domain.stop_rules import COMPARATOR_WORDS, Comparator, format_metric_value

BUDGET_SHARES: Final = (Decimal("0.8"), Decimal("1.0"))


@dataclass(frozen=True)
class Kind:
    name: str
    label: str
    # An event (a run stopped) is resolved as it is raised; a condition while it holds.
    event: bool = False
    # A channel gets it unless it mutes it; these few are muted on a new channel (noisy).
    muted_by_default: bool = False


KINDS: Final[dict[str, Kind]] = {
    k.name: k
    for k in (
        Kind("lot_ending", "Lot ending while runs run"),
        Kind("checkpoint_not_retrieved", "Checkpoint not retrieved"),
        Kind("budget", "Budget"),
        Kind("calendar_slack", "Calendar slack negative"),
        Kind("run_silent", "Run silent"),
        Kind("team_budget", "Team budget forecast over its allowance"),
        Kind("metric_threshold", "Metric crossed a threshold"),
        Kind("idle_gpu", "GPUs idle while the run runs"),
        Kind("run_stopped", "Run stopped", event=True),
        Kind("run_failed", "Run failed", event=True),
        Kind("run_finished", "Run finished", event=True, muted_by_default=True),
    )
}


def label(kind: str) -> str:
    """The words a person reads for an alert kind (the kind itself when it is unknown)."""
    found = KINDS.get(kind)
    return found.label if found is not None else kind


def default_muted() -> list[str]:
    return [k.name for k in KINDS.values() if k.muted_by_default]


@dataclass(frozen=True)
class LotEnd:
    key: str  # e.g. "lot:12"
    label: str
    end: datetime


@dataclass(frozen=True)
class LatestCheckpoint:
    key: str  # e.g. "checkpoint:55"
    run_id: str
    step: int
    location: str
    retrieved: bool


@dataclass(frozen=True)
class RunActivity:
    run_id: str
    points: int
    first_at: datetime
    last_at: datetime


@dataclass(frozen=True)
class MetricThreshold:
    """A threshold a team set on a metric (`ledger.models.MetricThreshold`)."""

    id: int
    metric: str
    comparator: Comparator
    threshold: float


@dataclass(frozen=True)
class MetricExtremes:
    """A running run's metric: its finite minimum and maximum so far (its summary)."""

    run_id: str
    metric: str
    minimum: float | None
    maximum: float | None


@dataclass(frozen=True)
class GpuUse:
    """A running run's GPU utilisation: the highest any of its GPUs logged since the idle
    window began (None: no sample in it), and its utilisation's first and last samples."""

    run_id: str
    busiest: float | None
    first_at: datetime
    last_at: datetime


@dataclass(frozen=True)
class IdleGpu:
    """When a GPU counts as idle: under ``percent`` utilisation for ``minutes``."""

    percent: float = 5.0
    minutes: float = 30.0


@dataclass(frozen=True)
class CampaignFacts:
    now: datetime
    currency: str
    lots: tuple[LotEnd, ...] = ()
    running_runs: tuple[str, ...] = ()
    latest_checkpoint: LatestCheckpoint | None = None
    spent: Decimal | None = None
    budget: Decimal | None = None
    over_hours: float | None = None
    activity: tuple[RunActivity, ...] = field(default_factory=tuple)
    thresholds: tuple[MetricThreshold, ...] = ()
    extremes: tuple[MetricExtremes, ...] = ()
    gpu_use: tuple[GpuUse, ...] = ()
    idle: IdleGpu = IdleGpu()


@dataclass(frozen=True)
class Limits:
    lot_hours: float = 12
    silence_factor: float = 3
    min_silence_minutes: float = 10


@dataclass(frozen=True)
class Condition:
    kind: str
    key: str
    message: str


def _hours(delta: timedelta) -> str:
    hours = Decimal(repr(delta.total_seconds() / 3600)).quantize(Decimal("0.1"), ROUND_HALF_UP)
    return f"{max(hours, Decimal(0))} h"


def lot_conditions(facts: CampaignFacts, limits: Limits) -> list[Condition]:
    found: list[Condition] = []
    soon = facts.now + timedelta(hours=limits.lot_hours)
    for lot in (lot for lot in facts.lots if lot.end <= soon):
        left = lot.end - facts.now
        when = f"ends in {_hours(left)}" if left.total_seconds() > 0 else "has ended"
        if facts.running_runs and left.total_seconds() > 0:
            runs = ", ".join(facts.running_runs)
            found.append(
                Condition(
                    "lot_ending",
                    lot.key,
                    f"{lot.label} {when} ({lot.end:%Y-%m-%d %H:%M} UTC) while "
                    f"{len(facts.running_runs)} run(s) run: {runs}",
                )
            )
        checkpoint = facts.latest_checkpoint
        if checkpoint is not None and not checkpoint.retrieved:
            where = checkpoint.location or "no location recorded"
            found.append(
                Condition(
                    "checkpoint_not_retrieved",
                    f"{lot.key}:{checkpoint.key}",
                    f"{lot.label} {when}: the latest verified checkpoint (run "
                    f"{checkpoint.run_id}, step {checkpoint.step}, at {where}) is not copied off "
                    "the rented machine",
                )
            )
    return found


def budget_conditions(facts: CampaignFacts, limits: Limits) -> list[Condition]:
    if facts.spent is None or facts.budget is None or facts.budget <= 0:
        return []
    return [
        Condition(
            "budget",
            f"budget:{int(share * 100)}",
            f"budget: spent {format_money(facts.spent)} {facts.currency} reached "
            f"{int(share * 100)}% of the budget {format_money(facts.budget)} {facts.currency}",
        )
        for share in BUDGET_SHARES
        if facts.spent >= facts.budget * share
    ]


def slack_conditions(facts: CampaignFacts, limits: Limits) -> list[Condition]:
    if facts.over_hours is None or facts.over_hours <= 0:
        return []
    message = (
        f"the forecast runs {facts.over_hours:g} h past the window: the calendar's slack is "
        "negative"
    )
    return [Condition("calendar_slack", "forecast", message)]


def silence_conditions(facts: CampaignFacts, limits: Limits) -> list[Condition]:
    found: list[Condition] = []
    for run in (r for r in facts.activity if r.run_id in facts.running_runs):
        gaps = run.points - 1
        interval = (run.last_at - run.first_at).total_seconds() / gaps if gaps > 0 else 0.0
        limit = max(interval * limits.silence_factor, limits.min_silence_minutes * 60)
        if (facts.now - run.last_at).total_seconds() > limit:
            found.append(
                Condition(
                    "run_silent",
                    f"run:{run.run_id}:{run.last_at.isoformat()}",
                    f"run {run.run_id} has logged nothing for {_hours(facts.now - run.last_at)} "
                    f"(it logged every {interval / 60:.1f} min)",
                )
            )
    return found


def crossed(threshold: MetricThreshold, extremes: MetricExtremes) -> float | None:
    """The run's value past the threshold (its maximum for above, minimum for below), or None."""
    above = threshold.comparator in ("gt", "ge")
    value = extremes.maximum if above else extremes.minimum
    if value is None:
        return None
    t = threshold.threshold
    hit = {"gt": value > t, "ge": value >= t, "lt": value < t, "le": value <= t}
    return value if hit[threshold.comparator] else None


def threshold_conditions(facts: CampaignFacts, limits: Limits) -> list[Condition]:
    found: list[Condition] = []
    running = set(facts.running_runs)
    for threshold in facts.thresholds:
        for extremes in facts.extremes:
            if extremes.metric != threshold.metric or extremes.run_id not in running:
                continue
            value = crossed(threshold, extremes)
            if value is None:
                continue
            words = COMPARATOR_WORDS[threshold.comparator]
            found.append(
                Condition(
                    "metric_threshold",
                    f"threshold:{threshold.id}:run:{extremes.run_id}",
                    f"run {extremes.run_id}: {threshold.metric} reached "
                    f"{format_metric_value(value)}, {words} the team's threshold "
                    f"{format_metric_value(threshold.threshold)}",
                )
            )
    return found


def idle_conditions(facts: CampaignFacts, limits: Limits) -> list[Condition]:
    """The running runs whose every GPU stayed under the idle threshold for the whole window:
    sampled since before it began and still sampled in it, no sample reaching the threshold."""
    start = facts.now - timedelta(minutes=facts.idle.minutes)
    found = []
    for use in facts.gpu_use:
        sampled = use.first_at <= start and use.last_at >= start
        if use.run_id not in facts.running_runs or not sampled or use.busiest is None:
            continue
        if use.busiest < facts.idle.percent:
            found.append(
                Condition(
                    "idle_gpu",
                    f"run:{use.run_id}:idle",
                    f"run {use.run_id}: its GPUs were idle, at most {use.busiest:g}% used for "
                    f"the last {facts.idle.minutes:g} min (under {facts.idle.percent:g}%)",
                )
            )
    return found


CONDITIONS: Final[tuple[Callable[[CampaignFacts, Limits], list[Condition]], ...]] = (
    lot_conditions,
    budget_conditions,
    slack_conditions,
    silence_conditions,
    threshold_conditions,
    idle_conditions,
)


def conditions(facts: CampaignFacts, limits: Limits | None = None) -> list[Condition]:
    """Every condition that holds now, in a stable order."""
    limits = limits or Limits()
    return [found for check in CONDITIONS for found in check(facts, limits)]


@dataclass(frozen=True)
class RunEvent:
    """What a person reads of a run that stopped, failed or finished."""

    run_id: str
    item: str
    status: str  # "stopped", "failed", "completed"
    reason: str = ""  # the stop's reason, with its rule's words
    hours: str = ""  # its observed hours, as text, when known


def run_event_condition(event: RunEvent) -> Condition:
    """The alert of a run event, keyed by the run and what happened (events are stored
    resolved as they are raised: docs/domain.md §19.7)."""
    where = f" ({event.item})" if event.item else ""
    hours = f" after {event.hours} h" if event.hours else ""
    if event.status == "stopped":
        kind, text = "run_stopped", f"run {event.run_id}{where} was stopped{hours}: {event.reason}"
    elif event.status == "failed":
        kind, text = "run_failed", f"run {event.run_id}{where} failed{hours}"
    else:
        kind, text = "run_finished", f"run {event.run_id}{where} finished{hours}"
    return Condition(kind, f"run:{event.run_id}:{event.status}", text)
