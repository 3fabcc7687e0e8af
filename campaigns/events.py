"""Named domain events: a campaigns service says what it changed, and an upper app that must
react (the estimates mark the forecast stale) subscribes without campaigns importing it, so the
dependencies still point one way (docs/architecture.md §1).

The service that makes the change emits the event itself, once per action, inside its
transaction: a handler's writes commit or roll back with the change. Nothing listens to model
saves; a row written without its service (a fixture, a migration) announces nothing. Handlers
are subscribed in the upper app's `AppConfig.ready()`; subscribing the same handler twice keeps
one (ready() may run more than once in tests).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

# A plan row or a campaign figure the forecast reads changed (payload: campaign_id): the
# campaign's window, budget, currency or status, an item, a stage or its dependencies, a lot,
# the baseline, a cut, a stage's observed hours.
PLAN_CHANGED = "plan_changed"
# A plan row was deleted (payload: campaign_id); unlike a change it creates nothing for a
# campaign that has no forecast yet.
PLAN_ROW_REMOVED = "plan_row_removed"
# A run's status, measured hours, item or kind changed, or a run opened with hours (payload:
# campaign_id).
RUN_CHANGED = "run_changed"
# A throughput sample was stored (payload: run_id, the run's primary key; campaign_id; kind).
THROUGHPUT_RECORDED = "throughput_recorded"

NAMES = frozenset({PLAN_CHANGED, PLAN_ROW_REMOVED, RUN_CHANGED, THROUGHPUT_RECORDED})

Handler = Callable[..., None]
_handlers: dict[str, list[Handler]] = {name: [] for name in NAMES}


def _known(name: str) -> str:
    if name not in NAMES:
        raise ValueError(f"unknown event {name!r}: one of {', '.join(sorted(NAMES))}")
    return name


def subscribe(name: str, handler: Handler) -> None:
    """Call `handler(**payload)` on every `emit(name, …)` from now on."""
    handlers = _handlers[_known(name)]
    if handler not in handlers:
        handlers.append(handler)


def emit(name: str, **payload: Any) -> None:
    """Tell every subscriber of `name`, in the order they subscribed, in the caller's
    transaction; a handler's exception is the caller's."""
    for handler in list(_handlers[_known(name)]):
        handler(**payload)
