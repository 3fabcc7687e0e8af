"""The check of a planned item's ``estimate_spec`` (docs/domain.md §24.9).

The spec is the preview's ``model`` / ``training`` / ``hardware`` objects, so the estimates
app's preview serializers judge it. Campaigns sit below estimates and cannot import them: the
estimates app registers its check here when it is ready (``EstimatesConfig.ready``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rest_framework import serializers

Check = Callable[[dict[str, Any]], dict[str, Any]]
_checks: list[Check] = []


def register(check: Check) -> None:
    """Install the check (once; a second registration replaces the first)."""
    _checks[:] = [check]


def validate(value: dict[str, Any] | None) -> dict[str, Any] | None:
    """The spec as the registered check accepts it; a ValidationError naming the fields."""
    if value is None:
        return None
    if not _checks:
        raise serializers.ValidationError("The estimates app is not installed: no spec check.")
    return _checks[0](value)
