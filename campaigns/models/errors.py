"""The refusals a campaign's rows raise when an action breaks a rule (docs/domain.md)."""

from __future__ import annotations

from typing import Any


class PlanFrozen(Exception):
    """A change that the committed plan forbids (stop rules, baseline, committed state)."""


class CampaignClosed(Exception):
    """The campaign is closed: it takes no run data, decisions, observed hours or deliverables."""


class RunsStillRunning(Exception):
    """Close was refused: these runs are still running (409, naming them)."""

    def __init__(self, run_ids: list[str]) -> None:
        super().__init__(
            f"runs still running: {', '.join(run_ids)}; finish or stop them, or close with "
            "stop_running to stop them"
        )
        self.run_ids = run_ids


class CommitRefused(Exception):
    """Commit was refused; `problems` says which requirement is missing."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems


class CommitOverTeamBudget(Exception):
    """Commit was refused by a receiver of `plan_commit_requested`: it would take the team's
    forecast over an allowance (docs/domain.md §22). `problems` names the figures in words,
    `periods` the figures themselves; committing with the acknowledgement goes through."""

    def __init__(self, problems: list[str], periods: list[dict[str, Any]]) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems
        self.periods = periods
