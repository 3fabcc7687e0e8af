"""MLflow's run search: its filter grammar, `order_by` and page tokens, on plain facts (pure:
no Django, no I/O; docs/mlflow.md "Searching runs").

A filter is clauses joined by AND (MLflow has no OR for runs), each
`<entity>.<key> <comparator> <value>`:

* `metrics.<key>` (also `metric.`) with `= != < <= > >=` and a number: the run's latest value;
* `params.<key>` (`param.`, `parameter.`, `parameters.`) and `tags.<key>` (`tag.`) with
  `= != LIKE ILIKE` and a quoted string, or `IS NULL` / `IS NOT NULL`;
* `attributes.<key>` (`attribute.`, `attr.`, `run.`): `run_id`, `run_name` (`run name`),
  `status`, `user_id`, `artifact_uri` with `= != LIKE ILIKE` (and `IN (...)` / `NOT IN (...)`
  for `run_id`); `start_time` (`created`) and `end_time`, milliseconds, with numeric
  comparators;
* `datasets.name`, `datasets.digest`, `datasets.context` with `= != LIKE ILIKE IN NOT IN`:
  true when any of the run's dataset inputs matches.

A key with spaces or dots is quoted with backticks or double quotes (metrics.`f1 score`).
LIKE is SQL's (`%` any run of characters, `_` one character), case-sensitive; ILIKE ignores
case. A run without the metric, param or tag never matches a comparison on it.

Order: runs by start time, newest first, then run id; each `order_by` entry
(`metrics.loss DESC`, `attributes.start_time`, `params.lr ASC`) is applied on top, missing
values last (NaN after numbers), as MLflow's own search sorts. A page token is base64 of
`{"offset": n}`, MLflow's format.

Units: times are milliseconds since 1970 (ints); metric values floats.
"""

from __future__ import annotations

import base64
import binascii
import json
import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

Kind = Literal["metric", "param", "tag", "attribute", "dataset"]

ENTITIES: dict[str, Kind] = {
    "metric": "metric",
    "metrics": "metric",
    "param": "param",
    "params": "param",
    "parameter": "param",
    "parameters": "param",
    "tag": "tag",
    "tags": "tag",
    "attribute": "attribute",
    "attributes": "attribute",
    "attr": "attribute",
    "run": "attribute",
    "dataset": "dataset",
    "datasets": "dataset",
}
STRING_ATTRIBUTES = frozenset({"run_id", "run_name", "status", "user_id", "artifact_uri"})
NUMERIC_ATTRIBUTES = frozenset({"start_time", "end_time"})
ALIASES = {"created": "start_time", "Created": "start_time", "run name": "run_name"}
ALIASES.update({"Run name": "run_name", "Run Name": "run_name"})
DATASET_KEYS = frozenset({"name", "digest", "context"})
NUMERIC_OPS = frozenset({"=", "!=", "<", "<=", ">", ">="})
STRING_OPS = frozenset({"=", "!=", "LIKE", "ILIKE"})
NULL_OPS = frozenset({"IS NULL", "IS NOT NULL"})
LIST_OPS = frozenset({"IN", "NOT IN"})
DATASET_CONTEXT_TAG = "mlflow.data.context"


@dataclass(frozen=True)
class Attributes:
    """The attributes a search knows: runs' by default; experiments and logged models search
    with their own, where a bare name (`name LIKE 'x%'`) is an attribute too, as in MLflow."""

    strings: frozenset[str]
    numbers: frozenset[str]
    aliases: Mapping[str, str]
    bare: bool = False


RUN_ATTRIBUTES = Attributes(STRING_ATTRIBUTES, NUMERIC_ATTRIBUTES, ALIASES)

Value = float | int | str | tuple[str, ...] | None


class SearchError(ValueError):
    """The filter, order_by or page token cannot be read; the message says where."""


@dataclass(frozen=True)
class Clause:
    kind: Kind
    key: str
    op: str
    value: Value


@dataclass(frozen=True)
class Order:
    kind: Kind
    key: str
    ascending: bool


@dataclass(frozen=True)
class RunFacts:
    """What a clause or an order looks at: latest metric values, params, tags, the run's
    attributes (times in ms) and its dataset inputs as (name, digest, context)."""

    run_id: str
    start_time: int
    metrics: Mapping[str, float] = field(default_factory=dict)
    params: Mapping[str, str] = field(default_factory=dict)
    tags: Mapping[str, str] = field(default_factory=dict)
    attributes: Mapping[str, Any] = field(default_factory=dict)
    datasets: tuple[tuple[str, str, str | None], ...] = ()


# --- Tokens ---------------------------------------------------------------------------------

_TOKEN = re.compile(
    r"""\s*(?:
      (?P<str>'(?:[^']|'')*'|"(?:[^"]|"")*")
    | (?P<tick>`[^`]*`)
    | (?P<op><=|>=|!=|<>|=|<|>)
    | (?P<lp>\()|(?P<rp>\))|(?P<comma>,)
    | (?P<num>[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?(?![\w.]))
    | (?P<word>[A-Za-z_][\w]*(?:\.(?:`[^`]*`|"(?:[^"]|"")*"|[\w.\-:/]+|[\w]*))?)
    )""",
    re.VERBOSE,
)


def _tokens(text: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    pos = 0
    while pos < len(text):
        if text[pos:].strip() == "":
            break
        m = _TOKEN.match(text, pos)
        if m is None or m.end() == pos:
            raise SearchError(f"cannot read the filter at {text[pos : pos + 20]!r}")
        kind = m.lastgroup or ""
        out.append((kind, m.group(kind)))
        pos = m.end()
    return out


def _unquote(text: str) -> str:
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"`":
        inner = text[1:-1]
        return inner if text[0] == "`" else inner.replace(text[0] * 2, text[0])
    return text


# --- Filter ---------------------------------------------------------------------------------


def _identifier(word: str, attrs: Attributes = RUN_ATTRIBUTES) -> tuple[Kind, str]:
    entity, dot, key = word.partition(".")
    if attrs.bare and not dot:
        entity, dot, key = "attributes", ".", word
    if not dot or not key:
        raise SearchError(
            f"{word!r} is not <entity>.<key>: the entity is one of metrics, params, tags, "
            "attributes, datasets"
        )
    kind = ENTITIES.get(entity.lower())
    if kind is None:
        raise SearchError(f"unknown entity {entity!r}: use metrics, params, tags, attributes")
    key = _unquote(key)
    if kind == "attribute":
        key = attrs.aliases.get(key, key)
        if key not in attrs.strings | attrs.numbers:
            known = ", ".join(sorted(attrs.strings | attrs.numbers))
            raise SearchError(f"unknown attribute {key!r}: one of {known}")
    if kind == "dataset" and key not in DATASET_KEYS:
        raise SearchError(f"unknown dataset attribute {key!r}: one of name, digest, context")
    return kind, key


def _operator(tokens: list[tuple[str, str]], i: int) -> tuple[str, int]:
    kind, text = tokens[i] if i < len(tokens) else ("", "")
    if kind == "op":
        return ("!=" if text == "<>" else text), i + 1
    words: list[str] = []
    while i < len(tokens) and tokens[i][0] == "word" and len(words) < 3:
        upper = tokens[i][1].upper()
        if upper not in ("IS", "NOT", "NULL", "LIKE", "ILIKE", "IN"):
            break
        words.append(upper)
        i += 1
        if upper in ("NULL", "LIKE", "ILIKE", "IN"):
            break
    op = " ".join(words)
    if op not in STRING_OPS | NULL_OPS | LIST_OPS:
        raise SearchError(f"expected a comparator after the key, found {text!r}")
    return op, i


def _list_value(tokens: list[tuple[str, str]], i: int) -> tuple[tuple[str, ...], int]:
    if i >= len(tokens) or tokens[i][0] != "lp":
        raise SearchError("IN takes a parenthesised list of quoted strings: ('a', 'b')")
    items, i = [], i + 1
    while i < len(tokens):
        kind, text = tokens[i]
        if kind != "str":
            raise SearchError("IN takes a parenthesised list of quoted strings: ('a', 'b')")
        items.append(_unquote(text))
        i += 1
        if i < len(tokens) and tokens[i][0] == "rp":
            return tuple(items), i + 1
        if i >= len(tokens) or tokens[i][0] != "comma":
            break
        i += 1
    raise SearchError("the IN list is not closed with ')'")


def _check(kind: Kind, key: str, op: str, attrs: Attributes) -> None:
    numeric = kind == "metric" or (kind == "attribute" and key in attrs.numbers)
    allowed = {
        True: NUMERIC_OPS,
        False: STRING_OPS
        | (NULL_OPS if kind in ("param", "tag") else frozenset())
        | (
            LIST_OPS if (kind, key) == ("attribute", "run_id") or kind == "dataset" else frozenset()
        ),
    }[numeric]
    if op not in allowed:
        raise SearchError(
            f"{op} does not apply to {kind} {key!r}; use one of {', '.join(sorted(allowed))}"
        )


def _value(kind: Kind, key: str, token: tuple[str, str], attrs: Attributes) -> Value:
    numeric = kind == "metric" or (kind == "attribute" and key in attrs.numbers)
    tkind, text = token
    if numeric:
        if tkind != "num":
            raise SearchError(f"{kind} {key!r} compares with a number, not {text!r}")
        if kind == "attribute":
            try:
                return int(text)
            except ValueError as exc:
                raise SearchError(f"{key} compares with whole milliseconds, not {text}") from exc
        return float(text)
    if tkind != "str":
        raise SearchError(f"{kind} {key!r} compares with a quoted string, not {text!r}")
    return _unquote(text)


def parse_filter(text: str | None, attrs: Attributes = RUN_ATTRIBUTES) -> tuple[Clause, ...]:
    """The clauses of an MLflow filter string ("" or None: none); SearchError otherwise."""
    if not text or not text.strip():
        return ()
    tokens = _tokens(text)
    clauses: list[Clause] = []
    i = 0
    while True:
        if i >= len(tokens) or tokens[i][0] not in ("word", "tick", "str"):
            raise SearchError("expected <entity>.<key> at the start of a clause")
        kind, key = _identifier(tokens[i][1], attrs)
        op, i = _operator(tokens, i + 1)
        _check(kind, key, op, attrs)
        value: Value = None
        if op in LIST_OPS:
            value, i = _list_value(tokens, i)
        elif op not in NULL_OPS:
            if i >= len(tokens):
                raise SearchError(f"{kind} {key!r} {op} needs a value")
            value, i = _value(kind, key, tokens[i], attrs), i + 1
        clauses.append(Clause(kind, key, op, value))
        if i >= len(tokens):
            return tuple(clauses)
        if tokens[i][0] != "word" or tokens[i][1].upper() != "AND":
            raise SearchError(
                f"clauses are joined by AND (MLflow has no OR for runs), found {tokens[i][1]!r}"
            )
        i += 1


# --- Matching -------------------------------------------------------------------------------


def _like(pattern: str, flags: int = 0) -> re.Pattern[str]:
    regex = re.escape(pattern).replace("%", ".*").replace("_", ".")
    return re.compile(
        ("" if pattern.startswith("%") else "^") + regex + ("" if pattern.endswith("%") else "$"),
        flags | re.DOTALL,
    )


COMPARE: dict[str, Callable[[Any, Any], bool]] = {
    "=": lambda a, b: a == b,
    "!=": lambda a, b: a != b,
    "<": lambda a, b: a < b,
    "<=": lambda a, b: a <= b,
    ">": lambda a, b: a > b,
    ">=": lambda a, b: a >= b,
    "LIKE": lambda a, b: _like(b).search(a) is not None,
    "ILIKE": lambda a, b: _like(b, re.IGNORECASE).search(a) is not None,
    "IN": lambda a, b: a in b,
    "NOT IN": lambda a, b: a not in b,
}


def _lhs(run: RunFacts, clause: Clause) -> Any:
    if clause.kind == "metric":
        return run.metrics.get(clause.key)
    if clause.kind == "param":
        return run.params.get(clause.key)
    if clause.kind == "tag":
        return run.tags.get(clause.key)
    if clause.key == "run_id":
        return run.run_id
    if clause.key == "start_time":
        return run.start_time
    return run.attributes.get(clause.key)


def matches(run: RunFacts, clauses: Iterable[Clause]) -> bool:
    """True when every clause holds for the run (MLflow's semantics: a missing value fails)."""
    for clause in clauses:
        if clause.kind == "dataset":
            index = ("name", "digest", "context").index(clause.key)
            if not any(
                d[index] is not None and COMPARE[clause.op](d[index], clause.value)
                for d in run.datasets
            ):
                return False
            continue
        lhs = _lhs(run, clause)
        if clause.op in NULL_OPS:
            if (lhs is None) != (clause.op == "IS NULL"):
                return False
            continue
        if lhs is None or not COMPARE[clause.op](lhs, clause.value):
            return False
    return True


# --- Order and pages ------------------------------------------------------------------------

_ORDER = re.compile(r"^\s*(?P<key>.+?)(?:\s+(?P<dir>ASC|DESC))?\s*$", re.IGNORECASE)


def parse_order_by(
    entries: Sequence[str] | None, attrs: Attributes = RUN_ATTRIBUTES
) -> tuple[Order, ...]:
    orders = []
    for entry in entries or ():
        m = _ORDER.match(entry or "")
        if m is None:
            raise SearchError(f"cannot read order_by {entry!r}")
        word = m.group("key").strip()
        if "." not in word:
            word = f"attributes.{word}"
        kind, key = _identifier(word, attrs)
        if kind == "dataset":
            raise SearchError("runs are not ordered by datasets")
        orders.append(Order(kind, key, (m.group("dir") or "ASC").upper() == "ASC"))
    return tuple(orders)


def _sort_value(run: RunFacts, order: Order) -> tuple[bool, Any]:
    value = _lhs(run, Clause(order.kind, order.key, "=", None))
    nan = isinstance(value, float) and math.isnan(value)
    if value is None or nan:
        # Missing and NaN values last whichever the direction (only the flag decides), NaN
        # before missing, as MLflow's own sort has them.
        rank = int(nan != order.ascending)
        return (True, rank) if order.ascending else (False, rank)
    return (False, value) if order.ascending else (True, value)


def ordered(runs: Iterable[RunFacts], orders: Sequence[Order]) -> list[RunFacts]:
    """Newest first, then by run id; each order applied on top (a stable sort per key)."""
    result = sorted(runs, key=lambda r: (-r.start_time, r.run_id))
    for order in reversed(orders):
        result = sorted(
            result,
            key=lambda r, o=order: _mixed_key(_sort_value(r, o)),  # type: ignore[misc]
            reverse=not order.ascending,
        )
    return result


def _mixed_key(pair: tuple[bool, Any]) -> tuple[bool, int, Any]:
    """Strings and numbers never compare with each other: group them by type."""
    flag, value = pair
    if isinstance(value, str):
        return (flag, 1, value)
    return (flag, 0, value if isinstance(value, int | float) else 0)


def page_offset(token: str | None) -> int:
    if not token:
        return 0
    try:
        offset = int(json.loads(base64.b64decode(token, validate=True))["offset"])
    except (binascii.Error, ValueError, KeyError, TypeError) as exc:
        raise SearchError("invalid page_token: pass the next_page_token of a search") from exc
    if offset < 0:
        raise SearchError("invalid page_token: pass the next_page_token of a search")
    return offset


def page_token(offset: int) -> str:
    return base64.b64encode(json.dumps({"offset": offset}).encode()).decode()


def page(
    runs: Sequence[RunFacts], token: str | None, max_results: int
) -> tuple[list[RunFacts], str | None]:
    start = page_offset(token)
    end = start + max_results
    return list(runs[start:end]), (page_token(end) if end < len(runs) else None)
