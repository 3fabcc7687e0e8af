"""runs/search: the caller's runs of the named experiments (campaigns), as
mlflow_api/domain/search_filter.py filters, orders and pages them.

Reads three times whatever the filter: the runs, the last step of each of their metrics, and
the points at those steps. The filter is applied in Python on those facts, so every clause
means exactly what the pure module says (and what MLflow's own search does).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db.models import Q, QuerySet

from campaigns.models import MetricPoint, Run
from campaigns.selectors import run_metrics
from mlflow_api import shapes
from mlflow_api.domain import search_filter as sf

MAX_SCANNED = 50_000
VIEW_TYPES = ("ACTIVE_ONLY", "DELETED_ONLY", "ALL")


@dataclass(frozen=True)
class Found:
    runs: list[dict[str, Any]]
    next_page_token: str | None


def _latest_points(run_pks: list[int]) -> dict[int, list[MetricPoint]]:
    """The last point of each metric of each run (highest step, then the last logged)."""
    return run_metrics.last_points(run_pks)


def _facts(run: Run, points: list[MetricPoint]) -> sf.RunFacts:
    info = shapes.run_info(run)
    return sf.RunFacts(
        run_id=run.run_id,
        start_time=info["start_time"],
        metrics={p.name: p.as_float() for p in points},
        params={k: shapes.as_text(v) for k, v in run.config.items()},
        tags={
            **{k: shapes.as_text(v) for k, v in run.tags.items()},
            "mlflow.runName": info["run_name"],
        },
        attributes={
            "run_name": info["run_name"],
            "status": info["status"],
            "user_id": info["user_id"],
            "artifact_uri": info["artifact_uri"],
            "end_time": info.get("end_time"),
        },
        datasets=tuple(_dataset_facts(run.inputs)),
    )


def _dataset_facts(inputs: list[dict[str, Any]]) -> list[tuple[str, str, str | None]]:
    found = []
    for item in inputs:
        dataset = item.get("dataset") or {}
        context = next(
            (
                t.get("value")
                for t in item.get("tags") or []
                if isinstance(t, dict) and t.get("key") == sf.DATASET_CONTEXT_TAG
            ),
            None,
        )
        found.append((str(dataset.get("name", "")), str(dataset.get("digest", "")), context))
    return found


def _digits(text: str) -> bool:
    # ASCII digits only: "²".isdigit() is True and int() refuses it; a bigint's length at most.
    return text.isascii() and text.isdigit() and len(text) <= 18


def _in_experiments(experiment_ids: list[str]) -> Q:
    """A campaign id is its default experiment (runs in no named experiment), `<campaign
    id>-<n>` a named one; an id of neither form matches nothing."""
    where = Q(pk__in=[])
    for text in map(str, experiment_ids):
        head, dash, tail = text.partition("-")
        if not _digits(head) or (dash and not _digits(tail)):
            continue
        if dash:
            where |= Q(campaign_id=int(head), mlflow__experiment_id=int(tail))
        else:
            where |= Q(campaign_id=int(head), mlflow__experiment__isnull=True)
    return where


def search_runs(
    runs: QuerySet[Run],
    *,
    experiment_ids: list[str],
    filter_string: str = "",
    order_by: list[str] | None = None,
    view_type: str = "ACTIVE_ONLY",
    max_results: int = 1000,
    page_token: str | None = None,
) -> Found:
    """Raises search_filter.SearchError on a filter, order or token it cannot read."""
    clauses = sf.parse_filter(filter_string)
    orders = sf.parse_order_by(order_by)
    sf.page_offset(page_token)
    scope = runs.filter(_in_experiments(experiment_ids)).select_related(
        "mlflow", "mlflow__experiment"
    )
    if view_type == "ACTIVE_ONLY":
        scope = scope.filter(deleted_at__isnull=True)
    elif view_type == "DELETED_ONLY":
        scope = scope.filter(deleted_at__isnull=False)
    rows = list(scope.order_by("-created_at", "run_id")[:MAX_SCANNED])
    latest = _latest_points([r.pk for r in rows])
    by_id = {r.run_id: r for r in rows}
    facts = [_facts(r, latest.get(r.pk, [])) for r in rows]
    kept = sf.ordered((f for f in facts if sf.matches(f, clauses)), orders)
    chosen, token = sf.page(kept, page_token, max_results)
    return Found(
        [
            shapes.run(
                by_id[f.run_id],
                metrics=[shapes.metric(p) for p in latest.get(by_id[f.run_id].pk, [])],
            )
            for f in chosen
        ],
        token,
    )
