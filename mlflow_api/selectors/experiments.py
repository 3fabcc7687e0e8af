"""experiments/search and the tags of a campaign's default experiment: the caller's campaigns
(each its default experiment) and their named experiments, filtered, ordered and paged by
MLflow's grammar (mlflow_api/domain/search_filter.py, with experiments' attributes).

Reads twice whatever the filter: the named experiments and the rows holding the campaigns'
default tags. Order: newest first, as MLflow's server lists experiments.
"""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet

from campaigns.models import Campaign
from mlflow_api import shapes
from mlflow_api.domain import search_filter as sf
from mlflow_api.models import DEFAULT_NAME, Experiment

EXPERIMENT_ATTRIBUTES = sf.Attributes(
    strings=frozenset({"name", "experiment_id", "lifecycle_stage"}),
    numbers=frozenset({"creation_time", "last_update_time"}),
    aliases={},
    bare=True,
)
MAX_SCANNED = 50_000


def default_tags(campaign: Campaign) -> dict[str, str]:
    row = Experiment.objects.filter(campaign=campaign, name=DEFAULT_NAME).first()
    return dict(row.tags) if row is not None else {}


def _facts(shown: dict[str, Any]) -> sf.RunFacts:
    tags = {t["key"]: t["value"] for t in shown["tags"]}
    return sf.RunFacts(
        run_id=shown["experiment_id"],
        start_time=shown["creation_time"] or 0,
        tags=tags,
        attributes={k: shown[k] for k in ("name", "experiment_id", "lifecycle_stage")}
        | {"creation_time": shown["creation_time"], "last_update_time": shown["last_update_time"]},
    )


def _visible(deleted: bool, view_type: str) -> bool:
    return {"ACTIVE_ONLY": not deleted, "DELETED_ONLY": deleted}.get(view_type, True)


def search_experiments(
    campaigns: QuerySet[Campaign],
    *,
    filter_string: str,
    order_by: list[str],
    view_type: str,
    max_results: int,
    page_token: str | None,
) -> tuple[list[dict[str, Any]], str | None]:
    """Raises search_filter.SearchError on a filter, order or token it cannot read."""
    clauses = sf.parse_filter(filter_string, EXPERIMENT_ATTRIBUTES)
    orders = sf.parse_order_by(order_by, EXPERIMENT_ATTRIBUTES)
    sf.page_offset(page_token)
    rows = list(
        Experiment.objects.filter(campaign__in=campaigns).select_related("campaign")[:MAX_SCANNED]
    )
    shown: list[dict[str, Any]] = []
    tags_of = {r.campaign_id: r.tags for r in rows if r.name == DEFAULT_NAME}
    if _visible(False, view_type):
        shown += [shapes.experiment(c, None, tags_of.get(c.pk, {})) for c in campaigns]
    shown += [
        shapes.experiment(r.campaign, r, {})
        for r in rows
        if r.name != DEFAULT_NAME and _visible(r.deleted_at is not None, view_type)
    ]
    by_id = {s["experiment_id"]: s for s in shown}
    kept = sf.ordered((f for f in map(_facts, shown) if sf.matches(f, clauses)), orders)
    chosen, token = sf.page(kept, page_token, max_results)
    return [by_id[f.run_id] for f in chosen], token
