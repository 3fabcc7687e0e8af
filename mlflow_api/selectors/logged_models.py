"""Logged models as MLflow shows them (their metrics: the points logged with their model id in
their source run) and logged-models/search: MLflow's filter grammar on a model's attributes,
params, tags and metrics, its order and page tokens (mlflow_api/domain/search_filter.py).

A model's metrics are read from its source run's points that are still hot (not yet packed,
docs/metric_store.md §3): one query per model shown.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from campaigns.models import Campaign, MetricPoint
from mlflow_api import shapes
from mlflow_api.domain import search_filter as sf
from mlflow_api.models import Experiment, LoggedModel

MODEL_ATTRIBUTES = sf.Attributes(
    strings=frozenset({"name", "model_id", "model_type", "status", "source_run_id"}),
    numbers=frozenset({"creation_timestamp", "last_updated_timestamp"}),
    aliases={"creation_time": "creation_timestamp", "last_updated_time": "last_updated_timestamp"},
    bare=True,
)
MAX_SCANNED = 50_000


def model_metrics(model: LoggedModel) -> list[dict[str, Any]]:
    if model.source_run_id is None:
        return []
    points = (
        MetricPoint.objects.filter(run_id=model.source_run_id, model_id=model.model_id)
        .select_related("key")
        .order_by("step", "seq")
    )
    return [shapes.metric(p, model.source_run_ref) for p in points]


def model_json(model: LoggedModel) -> dict[str, Any]:
    return shapes.logged_model(model, model_metrics(model))


def _facts(shown: dict[str, Any]) -> sf.RunFacts:
    info, data = shown["info"], shown["data"]
    return sf.RunFacts(
        run_id=info["model_id"],
        start_time=info["creation_timestamp_ms"] or 0,
        metrics={m["key"]: m["value"] for m in data["metrics"] if isinstance(m["value"], float)},
        params={p["key"]: p["value"] for p in data["params"]},
        tags={t["key"]: t["value"] for t in info["tags"]},
        attributes={k: info[k] for k in ("name", "model_id", "model_type", "status")}
        | {
            "source_run_id": info["source_run_id"],
            "creation_timestamp": info["creation_timestamp_ms"],
            "last_updated_timestamp": info["last_updated_timestamp_ms"],
        },
    )


def search_logged_models(
    places: Sequence[tuple[Campaign, Experiment | None]],
    *,
    filter_string: str,
    order_by: list[str],
    max_results: int,
    page_token: str | None,
) -> tuple[list[dict[str, Any]], str | None]:
    """The live models of the given experiments; raises search_filter.SearchError."""
    clauses = sf.parse_filter(filter_string, MODEL_ATTRIBUTES)
    orders = sf.parse_order_by(order_by, MODEL_ATTRIBUTES)
    sf.page_offset(page_token)
    shown = []
    for campaign, experiment in places:
        models = LoggedModel.objects.filter(
            campaign=campaign, experiment=experiment, deleted_at__isnull=True
        ).select_related("campaign", "experiment")
        shown += [model_json(m) for m in models[:MAX_SCANNED]]
    by_id = {s["info"]["model_id"]: s for s in shown}
    kept = sf.ordered((f for f in map(_facts, shown) if sf.matches(f, clauses)), orders)
    chosen, token = sf.page(kept, page_token, max_results)
    return [by_id[f.run_id] for f in chosen], token
