"""The runs table's reads (docs/domain.md §5.10): one page of the caller's runs with the columns
a person chose, sorted and filtered in the database, and the groups' mean ± spread.

What it costs does not grow with the runs or the metrics: a metric column is a join on the
run's metric summary for that name (the unique ``(run, name)`` index; latest and best are the
summary's ``last_value`` and finite ``min_value``/``max_value``, maintained by the ingest's
upsert, campaigns/services/metric_store.py), never a scan of points. A page is a fixed number of
statements whatever the runs, metrics or columns: the count, the page's rows, the groups' values,
the direction rules, the column choices (from the latest ``SAMPLE_RUNS`` runs in scope) and the
filters' items (bench/runs_table/run.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from django.db.models import Expression, F, FilteredRelation, Q, QuerySet, TextField
from django.db.models.fields.json import KeyTextTransform, KeyTransform
from django.db.models.functions import Cast

from campaigns.domain import runs_table as table
from campaigns.domain.metric_direction import loss_like
from campaigns.models import (
    MetricSummary,
    PlannedItem,
    Run,
    RunTableLayout,
    StopRule,
    StopRuleKind,
)

PER_PAGE = 50
# The column chooser offers the metrics and configuration keys of this many latest runs.
SAMPLE_RUNS = 500

_FIELD_ORDER: dict[str, tuple[str, ...]] = {
    "name": ("run_name", "run_id"),
    "campaign": ("campaign__title",),
    "item": ("variant__name",),
    "kind": ("kind",),
    "status": ("status",),
    "gpus": ("gpus",),
    "observed_hours": ("observed_hours",),
    "last_step": ("last_step",),
    "created_at": ("created_at",),
    "finished_at": ("finished_at",),
    "tags": ("created_at",),
}


# What a row shows: the sort carries only these (a run's config, inputs and the campaign's
# plan fields are wide, and the database sorts every matching run).
_SHOWN = (
    "team_id",
    "campaign_id",
    "variant_id",
    "run_id",
    "run_name",
    "kind",
    "status",
    "gpus",
    "observed_hours",
    "last_step",
    "created_at",
    "finished_at",
    "tags",
    "campaign__title",
    "variant__name",
)


@dataclass(frozen=True)
class Filters:
    status: str = ""
    kind: str = ""
    item: int | None = None
    tag: str = ""  # "key" (has the tag) or "key=value"
    config: str = ""  # "key=value"


@dataclass(frozen=True)
class Scope:
    team_ids: tuple[int, ...]
    campaign_id: int | None = None  # None: every campaign of the teams


@dataclass(frozen=True)
class Page:
    runs: list[Run]
    total: int
    page: int
    pages: int
    lower_is_better: dict[str, bool] = field(default_factory=dict)


def scoped(scope: Scope) -> QuerySet[Run]:
    runs = Run.objects.filter(team_id__in=scope.team_ids, deleted_at__isnull=True)
    return runs.filter(campaign_id=scope.campaign_id) if scope.campaign_id else runs


def _text_of(key: str, column: str) -> Expression:
    # As text on both databases: SQLite's JSON extraction answers numbers as numbers.
    return Cast(KeyTextTransform(key, column), output_field=TextField())


def filtered(runs: QuerySet[Run], filters: Filters) -> QuerySet[Run]:
    if filters.status:
        runs = runs.filter(status=filters.status)
    if filters.kind:
        runs = runs.filter(kind=filters.kind)
    if filters.item is not None:
        runs = runs.filter(variant_id=filters.item)
    if filters.tag:
        key, has_value, value = filters.tag.partition("=")
        runs = (
            runs.alias(tag_value=_text_of(key.strip(), "tags")).filter(tag_value=value.strip())
            if has_value
            else runs.filter(tags__has_key=key.strip())
        )
    if filters.config:
        key, _, value = filters.config.partition("=")
        runs = runs.alias(config_value=_text_of(key.strip(), "config")).filter(
            config_value=value.strip()
        )
    return runs


def directions(scope: Scope, metrics: Sequence[str]) -> dict[str, bool]:
    """Per metric, whether lower is better: the first metric-threshold rule on it in the
    scope's campaigns decides, else its name (campaigns/domain/metric_direction.py)."""
    comparators: dict[str, str] = {}
    if metrics:
        rules = StopRule.objects.filter(
            campaign__team_id__in=scope.team_ids,
            kind=StopRuleKind.METRIC_THRESHOLD,
            metric__in=list(metrics),
        )
        if scope.campaign_id:
            rules = rules.filter(campaign_id=scope.campaign_id)
        for metric, comparator in rules.order_by("id").values_list("metric", "comparator"):
            comparators.setdefault(metric, comparator)
    return {m: loss_like(m, comparators.get(m, "")) for m in metrics}


def _metric_aliases(columns: Sequence[table.Column]) -> dict[str, str]:
    names = sorted({c.name for c in columns if c.kind == "metric"})
    return {name: f"m{i}" for i, name in enumerate(names)}


def with_columns(
    runs: QuerySet[Run], columns: Sequence[table.Column], lower: dict[str, bool]
) -> QuerySet[Run]:
    """Each metric column as ``c<i>`` (and its non-finite token as ``t<i>``), each config
    column as ``c<i>``: one join per metric named, whatever the runs."""
    aliases = _metric_aliases(columns)
    runs = runs.annotate(
        **{
            alias: FilteredRelation("metric_summaries", condition=Q(metric_summaries__name=name))
            for name, alias in aliases.items()
        }
    )
    annotations: dict[str, Any] = {}
    for i, column in enumerate(columns):
        expression = column_expression(column, aliases, lower)
        if expression is not None:
            annotations[f"c{i}"] = expression
        if column.kind == "metric" and column.which == "latest":
            annotations[f"t{i}"] = F(f"{aliases[column.name]}__last_token")
    return runs.annotate(**annotations)


def column_expression(column: table.Column, aliases: dict[str, str], lower: dict[str, bool]) -> Any:
    """The database expression of a metric or config column (None for a run field)."""
    if column.kind == "config":
        return KeyTransform(column.name, "config")
    if column.kind != "metric":
        return None
    alias = aliases[column.name]
    if column.which == "latest":
        return F(f"{alias}__last_value")
    return F(f"{alias}__min_value" if lower.get(column.name) else f"{alias}__max_value")


def ordered(
    runs: QuerySet[Run], sort: table.Sort, columns: Sequence[table.Column]
) -> QuerySet[Run]:
    if sort.column.kind == "field":
        names = _FIELD_ORDER[sort.column.name]
        terms = [F(n).desc(nulls_last=True) if sort.descending else F(n).asc() for n in names]
    else:
        ref = F(f"c{list(columns).index(sort.column)}")
        terms = [ref.desc(nulls_last=True) if sort.descending else ref.asc(nulls_last=True)]
    return runs.order_by(*terms, "-id")


def page_of_runs(
    scope: Scope,
    columns: Sequence[table.Column],
    sort: table.Sort,
    filters: Filters,
    page: int = 1,
) -> Page:
    """One page of runs, sorted and filtered, with the chosen columns: two statements (the
    count and the rows) plus the direction rules."""
    lower = directions(scope, sorted({c.name for c in columns if c.kind == "metric"}))
    runs = filtered(scoped(scope), filters)
    total = runs.count()
    pages = max(1, -(-total // PER_PAGE))
    page = min(max(page, 1), pages)
    rows = (
        ordered(with_columns(runs, columns, lower), sort, columns)
        .select_related("campaign", "variant")
        .only(*_SHOWN)
    )
    start = (page - 1) * PER_PAGE
    return Page(list(rows[start : start + PER_PAGE]), total, page, pages, lower)


@dataclass(frozen=True)
class Group:
    label: str
    value: str  # what the filter of this group takes
    runs: int
    found: table.Spread


def groups(
    scope: Scope, filters: Filters, by: str, metric: table.Column, lower: dict[str, bool]
) -> list[Group]:
    """The filtered runs grouped ``by`` "item" or a "config:<key>" column, each with the mean ±
    spread of ``metric`` over its runs: one statement whatever the runs."""
    runs = with_columns(filtered(scoped(scope), filters), [metric], lower)
    if by == "item":
        key: Any = F("variant_id")
        label: Any = F("variant__name")
    else:
        key = label = _text_of(by.removeprefix("config:"), "config")
    values: dict[Any, list[float | None]] = {}
    labels: dict[Any, str] = {}
    rows = runs.annotate(group_key=key, group_label=label).order_by()
    for group_key, group_label, value in rows.values_list("group_key", "group_label", "c0"):
        values.setdefault(group_key, []).append(value)
        labels[group_key] = "(none)" if group_label is None else str(group_label)
    found = [
        Group(
            label=labels[k],
            value="" if k is None else str(k),
            runs=len(vs),
            found=table.mean_and_spread(vs),
        )
        for k, vs in values.items()
    ]
    return sorted(found, key=lambda g: g.label)


@dataclass(frozen=True)
class Choices:
    metrics: list[str]
    config_keys: list[str]
    items: list[tuple[int, str]]


def choices(scope: Scope) -> Choices:
    """What the column chooser and the filters offer: the metric names and configuration keys
    of the latest ``SAMPLE_RUNS`` runs in scope, and the scope's items (three statements)."""
    latest = scoped(scope).order_by("-id").values_list("id", "config")[:SAMPLE_RUNS]
    keys: set[str] = set()
    run_ids = []
    for run_id, config in latest:
        run_ids.append(run_id)
        if isinstance(config, dict):
            keys |= {str(k) for k in config}
    # The ids as a list: the summaries are then read off their (run, name) index, where a
    # subquery was planned as a scan of every summary.
    metrics = (
        MetricSummary.objects.filter(run_id__in=run_ids)
        .values_list("name", flat=True)
        .distinct()
        .order_by("name")
    )
    items = PlannedItem.objects.filter(campaign__team_id__in=scope.team_ids)
    if scope.campaign_id:
        items = items.filter(campaign_id=scope.campaign_id)
    return Choices(
        list(metrics),
        sorted(keys),
        list(items.order_by("campaign_id", "name").values_list("id", "name")),
    )


def layout_of(user: Any) -> tuple[table.Column, ...]:
    """The person's columns, the defaults until they chose; a stored key the table no longer
    knows is dropped rather than refusing the page."""
    stored = RunTableLayout.objects.filter(user_id=user.pk).values_list("columns", flat=True)
    keys = stored[0] if stored else list(table.DEFAULT_COLUMNS)
    usable = []
    for key in keys:
        try:
            usable.append(table.parse_column(str(key)).key)
        except table.ColumnRefused:
            continue
    return table.parse_columns(usable[: table.MAX_COLUMNS])
