"""A pilot's throughput from what its loop logged (docs/domain.md §10.7): when a pilot run
ends without a throughput of its own, the rule of campaigns/domain/logged_throughput.py reads
one from its metrics (the Hugging Face Trainer's, Lightning's ThroughputMonitor's, or its
logged steps) and records it through ingest.record_throughput, the service the client's
`run.throughput()` calls: the forecast then takes it as it takes any pilot (§10.6)."""

from __future__ import annotations

from datetime import datetime

from django.contrib.auth.models import User
from django.db import transaction

from campaigns.domain import logged_throughput as logged
from campaigns.models import Run, RunKind, ThroughputSample
from campaigns.selectors import logged_throughput as readings
from campaigns.services import ingest


@transaction.atomic
def record_logged_throughput(
    *, run: Run, now: datetime, acting_user: User | None = None
) -> ThroughputSample | None:
    """Record the throughput a pilot `run` (locked, not finished yet: record_throughput refuses
    a finished run) logged, unless it has one already or logged nothing that tells it."""
    if run.kind != RunKind.PILOT or ThroughputSample.objects.filter(run=run).exists():
        return None
    found = logged.from_metrics(
        readings.latest_values(run),
        gpus=run.gpus,
        span=readings.step_span(run),
        tokens_per_step=readings.tokens_per_step(run),
        wall_seconds=(now - run.started_at).total_seconds(),
    )
    if found is None:
        return None
    return ingest.record_throughput(
        run,
        tokens_per_second=found.tokens_per_second,
        samples_per_second=found.samples_per_second,
        gpus=found.gpus,
        measured_seconds=found.measured_seconds,
    )
