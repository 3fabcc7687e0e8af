"""What the client raises: ApiError (status and decoded body), DeskUnavailable (retries
exhausted), RunStopped (the server stopped the run)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any


class ApiError(Exception):
    """The server refused a request: ``status`` is the HTTP status, ``body`` the decoded JSON
    (a dict for DRF field errors, e.g. ``{"points": ["..."]}``), or the text when not JSON."""

    def __init__(self, status: int | None, body: Any, method: str, path: str) -> None:
        self.status = status
        self.body = body
        self.method = method
        self.path = path
        super().__init__(f"{method} {path} answered {status}: {_short(body)}")


class DeskUnavailable(ApiError):
    """Retries are exhausted: the server stayed unreachable (``status`` None, ``__cause__`` the
    last connection error) or kept answering 429/502/503/504 (``status`` the last one)."""

    def __init__(
        self, status: int | None, body: Any, method: str, path: str, attempts: int
    ) -> None:
        self.attempts = attempts
        super().__init__(status, body, method, path)
        self.args = (
            f"{method} {path}: no usable answer after {attempts} attempts ({_short(body)})",
        )


class RunStopped(Exception):
    """The server stopped this run: ``rule`` is the stop rule's id (None for a manual stop),
    ``reason`` the words it gave, ``step`` / ``at`` where and when, ``stop`` the raw object."""

    def __init__(
        self,
        run_id: str,
        rule: int | None,
        reason: str,
        *,
        step: int | None = None,
        at: str | None = None,
        stop: Mapping[str, Any] | None = None,
    ) -> None:
        self.run_id = run_id
        self.rule = rule
        self.reason = reason
        self.step = step
        self.at = at
        self.stop = dict(stop or {})
        by = f"rule #{rule}" if rule is not None else "hand"
        super().__init__(f"run {run_id!r} was stopped by {by}: {reason}")


def _short(body: Any, limit: int = 500) -> str:
    text = body if isinstance(body, str) else json.dumps(body, default=str)
    return text if len(text) <= limit else text[:limit] + "…"
