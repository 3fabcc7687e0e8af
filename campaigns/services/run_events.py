"""What a run's save tells the layers above (campaigns/events.py): a change of the figures a
forecast reads from runs (status, measured hours, item, kind) is `RUN_CHANGED`. Every run
service calls `announce_run_save` after its one save, with the fields it saved."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from campaigns import events
from campaigns.models import Run
from campaigns.services import run_clock

FORECAST_FIELDS = frozenset({"status", "observed_hours", "variant", "variant_id", "kind"})


def announce_run_save(run: Run, fields: Iterable[str]) -> None:
    if FORECAST_FIELDS.intersection(fields):
        events.emit(events.RUN_CHANGED, campaign_id=run.campaign_id)


def save_heard(run: Run, fields: list[str], now: datetime) -> None:
    """The locked `run` was heard from at `now` by a report (points, a checkpoint, a throughput
    sample): its heartbeat too, then one save of what changed, announced."""
    fields += run_clock.beat(run, now, now, saving=bool(fields))
    if fields:
        run.save(update_fields=fields)
        announce_run_save(run, fields)
