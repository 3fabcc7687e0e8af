"""Enqueueing a task once the transaction commits, without turning a committed write into an
error (docs/domain.md §28): `task.delay_on_commit(*args)`, Celery's own spelling, is the one way.

Celery's `delay_on_commit` (celery.contrib.django.task.DjangoTask) runs `delay` inside Django's
on-commit hooks, where a broker outage raised after the row was committed: the request answered
503 for a campaign, a report request or the admin's "Generate closing report" that were stored.
`DeskTask`, every task's class (config/celery.py `task_cls`), registers the hook robust instead
(Django logs the failure and the request answers the success it was), and every task enqueued
this way has a sweep or a beat that finds its row and enqueues it again (`sweep_stale_reports`
for a pending report, `sweep_stale_estimates` for a stale forecast, `retry_alert_deliveries` for
the alert outbox, `pack_metric_points` for a finished run's points): the row is the record of
the work owed.

The hook is an object with a `__qualname__`: Django's on-commit error logging names the
function by it, and an object without one (a `functools.partial`, as Celery registers) raised
AttributeError from the logging itself.
"""

from __future__ import annotations

from typing import Any

from celery.contrib.django.task import DjangoTask
from django.db import transaction


class OnCommitEnqueue:
    """`task.delay(*args, **kwargs)`, named for Django's on-commit error log."""

    def __init__(self, task: Any, *args: Any, **kwargs: Any) -> None:
        self.task, self.args, self.kwargs = task, args, kwargs
        self.__qualname__ = f"enqueue {task.name}{args!r}"

    def __call__(self) -> None:
        self.task.delay(*self.args, **self.kwargs)

    def __repr__(self) -> str:
        return f"<{self.__qualname__}>"


class DeskTask(DjangoTask):  # type: ignore[misc]
    """Every task of the desk: Celery's Django task, its after-commit enqueue made robust."""

    def delay_on_commit(self, *args: Any, **kwargs: Any) -> None:
        """`delay(*args, **kwargs)` after the commit; a failure is logged, and the task's sweep
        sends it later (the caller's row says the work is owed)."""
        transaction.on_commit(OnCommitEnqueue(self, *args, **kwargs), robust=True)
