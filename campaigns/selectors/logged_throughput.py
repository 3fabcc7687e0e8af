"""What a run logged that tells its throughput (campaigns/domain/logged_throughput.py): the
latest value of each throughput metric the libraries log, the span of its most-logged metric
(first and last step, when each was logged) and the tokens per step stated for it. A few
queries per run, whatever its length. Writes nothing."""

from __future__ import annotations

from datetime import UTC, datetime

from django.utils.dateparse import parse_datetime

from campaigns.domain import logged_throughput as logged
from campaigns.models import MetricSummary, Run
from campaigns.selectors import raw_points as raw
from campaigns.selectors import run_metrics


def latest_values(run: Run) -> dict[str, float]:
    """The latest (largest step) value of each throughput metric the run logged."""
    rows = MetricSummary.objects.filter(run=run, name__in=logged.NAMES)
    return {row.name: run_metrics.as_summary(row).last_value for row in rows}


def _logged_at(point: raw.Raw) -> float | None:
    """When a point was logged, in seconds since 1970: the client's timestamp when it sent
    one, else its receipt (a raw read may hand back a naive UTC time, or its text)."""
    if point.timestamp_ms is not None:
        return point.timestamp_ms / 1000
    at = point.created_at
    if isinstance(at, str):
        at = parse_datetime(at)
    if not isinstance(at, datetime):
        return None
    return (at if at.tzinfo is not None else at.replace(tzinfo=UTC)).timestamp()


def step_span(run: Run) -> logged.StepSpan | None:
    """The first and last step of the run's most-logged metric (not a throughput figure) and
    the seconds between their logging; None with fewer than two steps."""
    busiest = (
        MetricSummary.objects.filter(run=run, points_kept=True)
        .exclude(name__in=logged.NAMES)
        .order_by("-count", "name")
        .first()
    )
    if busiest is None or busiest.last_step <= busiest.first_step:
        return None
    first = raw.page(run.pk, busiest.pk, after=None, limit=1)
    last = raw.last_at({busiest.pk: (run.pk, busiest.last_step)}).get(busiest.pk)
    if not first or last is None:
        return None
    began, ended = _logged_at(first[0]), _logged_at(last)
    if began is None or ended is None:
        return None
    return logged.StepSpan(first[0].step, last.step, ended - began)


def _number(value: object) -> float | None:
    try:
        number = float(str(value))
    except ValueError:
        return None
    return number if number > 0 else None


def tokens_per_step(run: Run) -> float | None:
    """The run's `tokens_per_step` param (MLflow params are its config), else its item's."""
    stated = _number(run.config.get("tokens_per_step")) if isinstance(run.config, dict) else None
    if stated is None and run.variant_id is not None and run.variant is not None:
        config = run.variant.config if isinstance(run.variant.config, dict) else {}
        stated = _number(config.get("tokens_per_step"))
    return stated
