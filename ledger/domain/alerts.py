"""Which alert conditions hold for a campaign now (pure: no Django, no I/O; docs/domain.md §19).

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

Units: hours and minutes of wall time; money ``Decimal`` in the campaign's currency.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from decimal import ROUND_HALF_UP, Decimal
from typing import Final

from campaigns.domain.formatting import format_money

BUDGET_SHARES: Final = (Decimal("0.8"), Decimal("1.0"))


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
    gpu_use: tuple[GpuUse, ...] = ()
    idle: IdleGpu = IdleGpu()


@dataclass(frozen=True)
class Condition:
    kind: str
    key: str
    message: str


def _hours(delta: timedelta) -> str:
    hours = Decimal(repr(delta.total_seconds() / 3600)).quantize(Decimal("0.1"), ROUND_HALF_UP)
    return f"{max(hours, Decimal(0))} h"


def conditions(
    facts: CampaignFacts,
    *,
    lot_hours: float = 12,
    silence_factor: float = 3,
    min_silence_minutes: float = 10,
) -> list[Condition]:
    """Every condition that holds now, in a stable order."""
    found: list[Condition] = []
    soon = facts.now + timedelta(hours=lot_hours)
    for lot in facts.lots:
        if lot.end > soon:
            continue
        left = lot.end - facts.now
        when = f"ends in {_hours(left)}" if left.total_seconds() > 0 else "has ended"
        if facts.running_runs and left.total_seconds() > 0:
            found.append(
                Condition(
                    "lot_ending",
                    lot.key,
                    f"{lot.label} {when} ({lot.end:%Y-%m-%d %H:%M} UTC) while "
                    f"{len(facts.running_runs)} run(s) run: {', '.join(facts.running_runs)}",
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
    if facts.spent is not None and facts.budget is not None and facts.budget > 0:
        for share in BUDGET_SHARES:
            if facts.spent >= facts.budget * share:
                found.append(
                    Condition(
                        "budget",
                        f"budget:{int(share * 100)}",
                        f"budget: spent {format_money(facts.spent)} {facts.currency} reached "
                        f"{int(share * 100)}% of the budget {format_money(facts.budget)} "
                        f"{facts.currency}",
                    )
                )
    if facts.over_hours is not None and facts.over_hours > 0:
        found.append(
            Condition(
                "calendar_slack",
                "forecast",
                f"the forecast runs {facts.over_hours:g} h past the window: the calendar's "
                "slack is negative",
            )
        )
    found += silent_runs(facts, silence_factor, min_silence_minutes)
    return found + idle_gpus(facts)


def silent_runs(
    facts: CampaignFacts, silence_factor: float, min_silence_minutes: float
) -> list[Condition]:
    """The running runs that logged nothing for longer than their own interval allows."""
    found = []
    for run in facts.activity:
        if run.run_id not in facts.running_runs:
            continue
        interval = (
            (run.last_at - run.first_at).total_seconds() / (run.points - 1)
            if run.points > 1
            else 0.0
        )
        limit = max(interval * silence_factor, min_silence_minutes * 60)
        silent = (facts.now - run.last_at).total_seconds()
        if silent > limit:
            found.append(
                Condition(
                    "run_silent",
                    f"run:{run.run_id}:{run.last_at.isoformat()}",
                    f"run {run.run_id} has logged nothing for {_hours(facts.now - run.last_at)} "
                    f"(it logged every {interval / 60:.1f} min)",
                )
            )
    return found


def idle_gpus(facts: CampaignFacts) -> list[Condition]:
    """The running runs whose every GPU stayed under the idle threshold for the whole window:
    sampled since before it began and still sampled in it, no sample reaching the threshold."""
    window = timedelta(minutes=facts.idle.minutes)
    start = facts.now - window
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
