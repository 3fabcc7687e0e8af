"""Keys MLflow's server takes for metrics, params and tags, and the wording of its refusals, so
the same client code fails the same way on both servers (pure: no Django, no I/O).

A key holds only letters, digits, `_ - . / :` and spaces, and must name itself as a path: it
may not normalise to something else (`a//b`, `a/./b`), be `.`, start with `..` or `/`
(`../bad/metric/name`). Keys are at most 250 characters. A value of a string field must be a
string: `123` where a name is expected is refused, not read as "123".
"""

from __future__ import annotations

import json
import posixpath
import re
from typing import Any

MAX_KEY = 250
_ALLOWED = re.compile(r"[/\w.\- :]*")
SEE_DOCS = " See the API docs for more information about request parameters."


def shown(value: Any) -> str:
    """A value as MLflow's messages quote it (JSON, keys sorted)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def missing(field: str) -> str:
    return f"Missing value for required parameter '{field}'.{SEE_DOCS}"


def invalid(field: str, value: Any, why: str = "") -> str:
    hint = why or f"Hint: Value was of type '{type(value).__name__}'."
    return f"Invalid value {shown(value)} for parameter '{field}' supplied: {hint}"


def key_problem(name: str) -> str | None:
    """Why `name` cannot be a metric, param or tag key; None when it can."""
    if not _ALLOWED.fullmatch(name):
        return (
            "Names may only contain alphanumerics, underscores (_), dashes (-), periods (.), "
            "spaces ( ), colon(:) and slashes (/)."
        )
    normal = posixpath.normpath(name)
    if normal != name or normal == "." or normal.startswith(("..", "/")):
        return (
            f"Names must be unique as paths: {name!r} would resolve to {normal!r} (no '.' or "
            "'..' parts, no leading or doubled '/')"
        )
    if len(name) > MAX_KEY:
        return f"Names are at most {MAX_KEY} characters."
    return None


def duplicate_keys(keys: list[str]) -> list[str]:
    """The keys that occur more than once, in order of their second occurrence."""
    seen: set[str] = set()
    twice = []
    for key in keys:
        if key in seen and key not in twice:
            twice.append(key)
        seen.add(key)
    return twice
