"""The runs table's columns, sorting and groups (docs/domain.md §5.10). Pure: no Django, no I/O.

A column is a key a person picks and the table remembers:

- ``field:<name>``: a field of the run (``RUN_FIELDS``: its name, campaign, item, kind, …);
- ``metric:<name>:latest`` or ``metric:<name>:best``: the metric's value at the run's largest
  step, or its best finite value (the lowest when the metric is loss-like, else the highest:
  campaigns/domain/metric_direction.py), both read from the run's metric summary;
- ``config:<key>``: a key of the run's configuration.

A group is a set of runs sharing an item or a configuration value (the seeds of one setting);
its figure is the mean ± spread of one metric column over the runs that logged a finite value,
the spread being the sample standard deviation (none for a single run). Units: the metric's own.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Final, Literal

ColumnKind = Literal["field", "metric", "config"]

# The run's own fields a table may show, in the order a chooser lists them, with their labels.
RUN_FIELDS: Final[dict[str, str]] = {
    "name": "Run",
    "campaign": "Campaign",
    "item": "Item",
    "kind": "Kind",
    "status": "Status",
    "gpus": "GPUs",
    "observed_hours": "Hours",
    "last_step": "Last step",
    "created_at": "Started",
    "finished_at": "Finished",
    "tags": "Tags",
}
DEFAULT_COLUMNS: Final = (
    "field:item",
    "field:kind",
    "field:status",
    "field:observed_hours",
    "field:created_at",
)
WHICH: Final = ("latest", "best")
# A layout holds at most this many columns: the table stays readable at 1366 px (wider ones
# scroll inside the table, the run's name frozen).
MAX_COLUMNS: Final = 16
_MAX_KEY = 250


class ColumnRefused(ValueError):
    """A column key the table cannot show, in words naming it."""


@dataclass(frozen=True)
class Column:
    key: str
    kind: ColumnKind
    name: str  # the field, the metric or the configuration key
    which: str = ""  # "latest" or "best" for a metric column

    @property
    def label(self) -> str:
        if self.kind == "field":
            return RUN_FIELDS[self.name]
        if self.kind == "metric":
            return f"{self.name} ({self.which})"
        return self.name


def parse_column(key: str) -> Column:
    """The column a key names; ColumnRefused says why a key is not one."""
    kind, _, rest = key.partition(":")
    if not rest or len(key) > _MAX_KEY:
        raise ColumnRefused(f"{key!r} is not a column (field:…, metric:…:latest|best, config:…)")
    if kind == "field":
        if rest not in RUN_FIELDS:
            raise ColumnRefused(f"{rest!r} is not a run field ({', '.join(RUN_FIELDS)})")
        return Column(key, "field", rest)
    if kind == "metric":
        name, _, which = rest.rpartition(":")
        if not name or which not in WHICH:
            raise ColumnRefused(f"{key!r}: a metric column ends in :latest or :best")
        return Column(key, "metric", name, which)
    if kind == "config":
        return Column(key, "config", rest)
    raise ColumnRefused(f"{key!r} is not a column (field:…, metric:…:latest|best, config:…)")


def parse_columns(keys: Iterable[str]) -> tuple[Column, ...]:
    """The columns in order, each once, the run's name first and always there."""
    seen: dict[str, Column] = {"field:name": parse_column("field:name")}
    for key in keys:
        column = parse_column(key)
        seen.setdefault(column.key, column)
    if len(seen) > MAX_COLUMNS + 1:
        raise ColumnRefused(f"at most {MAX_COLUMNS} columns besides the run's name")
    return tuple(seen.values())


@dataclass(frozen=True)
class Sort:
    column: Column
    descending: bool


def parse_sort(text: str, columns: Sequence[Column]) -> Sort:
    """``key`` or ``-key`` of one of the columns shown; else the newest runs first."""
    descending = text.startswith("-")
    key = text[1:] if descending else text
    for column in columns:
        if column.key == key:
            return Sort(column, descending)
    return Sort(parse_column("field:created_at"), True)


@dataclass(frozen=True)
class Spread:
    runs: int  # runs in the group with a finite value
    mean: float | None
    spread: float | None  # the sample standard deviation; None below two runs


def mean_and_spread(values: Iterable[float | None]) -> Spread:
    """The mean ± sample standard deviation of the finite values (a run without one is left
    out: a diverged seed is no value to average)."""
    finite = [v for v in values if v is not None and math.isfinite(v)]
    if not finite:
        return Spread(0, None, None)
    mean = math.fsum(finite) / len(finite)
    if len(finite) < 2:
        return Spread(1, mean, None)
    variance = math.fsum((v - mean) ** 2 for v in finite) / (len(finite) - 1)
    return Spread(len(finite), mean, math.sqrt(variance))


def spread_in_words(found: Spread) -> str:
    """``1.234 ± 0.05 (3 runs)``, as the table prints a group."""
    if found.mean is None:
        return "no value"
    runs = f"{found.runs} run{'s' if found.runs != 1 else ''}"
    if found.spread is None:
        return f"{found.mean:.5g} ({runs})"
    return f"{found.mean:.5g} ± {found.spread:.2g} ({runs})"
