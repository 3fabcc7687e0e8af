"""Reading a metrics batch (the /api/v1/ body and the MLflow facade's points): parse, check
every point and name what is wrong by index and field, never a 500 (docs/api.md). Pure of the
database: campaigns/services/ingest.py stores what this returns."""

from __future__ import annotations

import json
import math
from typing import Any

import orjson

from campaigns.domain import stop_rules as rules
from campaigns.domain.identifiers import identifier_problem
from campaigns.services.ingest import Point

MAX_POINTS = 10_000
# /api/v1/'s limit (the MLflow facade allows MLflow's 250, the column's width).
MAX_NAME_LENGTH = 100
STEP_MAX = 2**63 - 1
MAX_ERRORS = 20
_TOKENS = {
    "nan": "NaN",
    "infinity": "Infinity",
    "+infinity": "Infinity",
    "inf": "Infinity",
    "+inf": "Infinity",
    "-infinity": "-Infinity",
    "-inf": "-Infinity",
}
_TOKEN_VALUES = {"NaN": float("nan"), "Infinity": float("inf"), "-Infinity": float("-inf")}


class BatchRefused(Exception):
    """The batch cannot be taken as sent: `status` (400/413/415) and a DRF-shaped `body`."""

    def __init__(self, status: int, body: dict[str, Any]) -> None:
        super().__init__(body)
        self.status = status
        self.body = body


def _finite_float(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise ValueError(f"number {text} does not fit a double; send Infinity if you mean it")
    return value


def _loads(raw: bytes) -> Any:
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        # orjson refuses the bare NaN/Infinity tokens that Python's json module writes; those
        # bodies (rare: a diverging run) take the slower standard parser, which reads them.
        if b"NaN" not in raw and b"Infinity" not in raw:
            raise BatchRefused(400, {"detail": f"JSON parse error - {exc}"}) from exc
    try:
        return json.loads(raw, parse_float=_finite_float)
    except (ValueError, RecursionError) as exc:
        raise BatchRefused(400, {"detail": f"JSON parse error - {exc}"}) from exc


def _name_problem(name: Any, max_name: int = MAX_NAME_LENGTH) -> str:
    if not isinstance(name, str):
        return "A metric name is a string."
    if not name or len(name) > max_name:
        return f"A metric name has 1 to {max_name} characters."
    # One rule, the schema's pattern (campaigns/api/fields.py). Stop rules find their metric by
    # exact name: " loss" would never be "loss".
    return identifier_problem(name)


def read_metric_batch(raw: bytes) -> list[Point]:
    """Parse and check `{"points": [{"name", "step", "value"}, ...]}` without serializers.

    Values: JSON numbers, the bare tokens NaN/Infinity/-Infinity, or those tokens as strings
    (any letter case, "inf" too). Raises BatchRefused: 413 over MAX_POINTS, 400 naming the
    point and field otherwise (the first MAX_ERRORS problems, in DRF's list-field shape).
    """
    data = _loads(raw)
    if not isinstance(data, dict):
        raise BatchRefused(
            400, {"non_field_errors": ['Expected an object: {"points": [{...}, ...]}.']}
        )
    if "points" not in data:
        raise BatchRefused(400, {"points": ["This field is required."]})
    items = data["points"]
    if not isinstance(items, list):
        raise BatchRefused(400, {"points": ["Expected a list of points."]})
    return check_points(items)


def check_points(
    items: list[Any], *, max_name: int = MAX_NAME_LENGTH, min_step: int = 0
) -> list[Point]:
    """Check decoded points `[{"name", "step", "value"}, ...]` (read_metric_batch's rules and
    limits; the MLflow facade calls it with the metrics it translated, with MLflow's limits:
    250-character names and negative steps)."""
    if len(items) > MAX_POINTS:
        raise BatchRefused(
            413,
            {
                "detail": f"A batch holds at most {MAX_POINTS} points; this one has "
                f"{len(items)}. Send it in several requests.",
                "max_points": MAX_POINTS,
            },
        )
    points: list[Point] = []
    errors: dict[str, dict[str, list[str]]] = {}
    checked_names: dict[str, str] = {}  # a batch repeats a handful of names
    isfinite = math.isfinite
    for index, item in enumerate(items):
        if type(item) is dict:
            # The common point, taken without building its problems: a name already found
            # good in this batch, a step in range, a finite float. Anything else (a new name, an
            # integer or non-finite value, a problem) goes the whole way through _check_point.
            name, step, value = item.get("name"), item.get("step"), item.get("value")
            if (
                type(value) is float
                and type(step) is int
                and type(name) is str
                and min_step <= step <= STEP_MAX
                and isfinite(value)
                and checked_names.get(name) == ""
            ):
                points.append(Point(name, step, value, ""))
                continue
        if type(item) is not dict:
            errors[str(index)] = {"non_field_errors": ["Expected {name, step, value}."]}
        else:
            point, problems = _check_point(item, checked_names, max_name, min_step)
            if point is not None:
                points.append(point)
                continue
            errors[str(index)] = problems
        if len(errors) >= MAX_ERRORS:
            break
    if errors:
        raise BatchRefused(400, {"points": errors})
    return points


def _check_point(
    item: dict[str, Any], checked_names: dict[str, str], max_name: int, min_step: int
) -> tuple[Point | None, dict[str, list[str]]]:
    """One point, or what is wrong with it by field."""
    problems: dict[str, list[str]] = {}
    name: Any = item.get("name")
    problem = checked_names.get(name) if type(name) is str else None
    if problem is None:
        problem = _name_problem(name, max_name)
        if type(name) is str:
            checked_names[name] = problem
    if problem:
        problems["name"] = [problem]
    step: Any = item.get("step")
    # type() rather than isinstance(): JSON true is a bool, which isinstance() calls an int.
    if type(step) is not int or not min_step <= step <= STEP_MAX:
        low = "0" if min_step == 0 else "-2**63"
        problems["step"] = [f"A step is an integer from {low} to 2**63-1."]
    value, token, value_problem = _point_value(item.get("value"))
    if value_problem:
        problems["value"] = [value_problem]
    if problems:
        return None, problems
    return Point(name, step, value, token), problems


def _point_value(raw_value: Any) -> tuple[float, str, str]:
    """(value, non-finite token or "", problem or "") of a point's JSON value."""
    kind = type(raw_value)
    if kind is float:
        token = "" if math.isfinite(raw_value) else rules.format_metric_value(raw_value)
        return raw_value, token, ""
    if kind is int:
        try:
            return float(raw_value), "", ""
        except OverflowError:
            return 0.0, "", "This number does not fit a double."
    if kind is str and raw_value.lower() in _TOKENS:
        token = _TOKENS[raw_value.lower()]
        return _TOKEN_VALUES[token], token, ""
    return (
        0.0,
        "",
        "A value is a number, or NaN, Infinity or -Infinity (bare JSON tokens or strings).",
    )
