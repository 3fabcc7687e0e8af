"""Which checkpoint the closing report may tell a reader to resume from (docs/domain.md).

Pure: no Django. A checkpoint is a valid resume point when all of these hold:

- a reload in a new process verified it (``resume_verified``);
- its run was not stopped by a rule (a stopped run's state is the one that diverged);
- it has a location, and that location passes the deliverable path checks of
  ledger/domain/deliverable_checks.py (no temporary directory such as ``/tmp``: it will not be
  there next week);
- it holds every component the campaign requires (model, optimizer, …).

The latest valid one is chosen. When none is valid the report says there is no valid resume
point, and why, checkpoint by checkpoint reason counts.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from ledger.domain.deliverable_checks import temporary_directory_of

SHOWN = 5  # reasons listed one by one; older ones are counted


@dataclass(frozen=True)
class CheckpointFacts:
    run_id: str
    run_status: str
    step: int
    components: tuple[str, ...]
    location: str
    verified: bool
    restore_seconds: float | None = None


@dataclass(frozen=True)
class ResumeChoice:
    checkpoint: CheckpointFacts | None
    why_not: tuple[str, ...] = field(default=())  # empty when a checkpoint was chosen


def problems_of(c: CheckpointFacts, required: frozenset[str]) -> list[str]:
    """What keeps ``c`` from being a resume point, in words; empty when it is one."""
    problems = []
    if not c.verified:
        problems.append("was never reloaded in a new process")
    if c.run_status == "stopped":
        problems.append(f"its run {c.run_id} was stopped by a rule")
    if not c.location:
        problems.append("has no recorded location")
    elif (tmp := temporary_directory_of(c.location)) is not None:
        problems.append(f"sits in the temporary directory {tmp} ({c.location})")
    missing = sorted(required - set(c.components))
    if missing:
        problems.append(f"lacks {', '.join(missing)}")
    return problems


def choose_resume_point(
    checkpoints: Sequence[CheckpointFacts], required: frozenset[str]
) -> ResumeChoice:
    """The latest valid checkpoint (``checkpoints`` newest first), or why there is none."""
    for c in checkpoints:
        if not problems_of(c, required):
            return ResumeChoice(c)
    if not checkpoints:
        return ResumeChoice(None, ("no checkpoint was verified by a reload in a new process",))
    why = [
        f"the checkpoint of run {c.run_id} at step {c.step} " + "; ".join(problems_of(c, required))
        for c in checkpoints[:SHOWN]
    ]
    if len(checkpoints) > SHOWN:
        why.append(f"and {len(checkpoints) - SHOWN} older checkpoint(s), none valid")
    return ResumeChoice(None, tuple(why))
