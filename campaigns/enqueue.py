"""Enqueueing a task once the transaction commits, without turning a committed write into an
error (docs/domain.md §28).

Celery's `delay_on_commit` runs `delay` inside Django's on-commit hooks, where a broker outage
raised after the row was committed: the request answered 503 for a campaign, a report request
or the admin's "Generate closing report" that were stored. Here the hook is robust (Django logs
the failure and the request answers the success it was) and every task enqueued this way has a
sweep that finds its row and enqueues it again (`sweep_stale_reports` for a pending report,
`sweep_stale_estimates` for a stale forecast): the row is the record of the work owed.

The hook is an object with a `__qualname__`: Django's on-commit error logging names the
function by it, and an object without one raised AttributeError from the logging itself.
"""

from __future__ import annotations

from typing import Any

from django.db import transaction


class OnCommitEnqueue:
    """`task.delay(*args)`, named for Django's on-commit error log."""

    def __init__(self, task: Any, *args: Any) -> None:
        self.task, self.args = task, args
        self.__qualname__ = f"enqueue {task.name}{args!r}"

    def __call__(self) -> None:
        self.task.delay(*self.args)

    def __repr__(self) -> str:
        return f"<{self.__qualname__}>"


def enqueue_on_commit(task: Any, *args: Any) -> None:
    """`task.delay(*args)` after the commit; a failure is logged, and the task's sweep sends
    it later (the caller's row says the work is owed)."""
    transaction.on_commit(OnCommitEnqueue(task, *args), robust=True)
