"""Reading settings from the environment: each helper names the variable in the error that a
malformed value raises at start-up, rather than failing later in a request."""

import os

from django.core.exceptions import ImproperlyConfigured


def env_bool(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


def env_int(name: str, default: int) -> int:
    try:
        return int(os.environ.get(name) or default)
    except ValueError as exc:
        raise ImproperlyConfigured(f"{name} must be a whole number.") from exc


def env_list(name: str, default: str) -> list[str]:
    return [part.strip() for part in os.environ.get(name, default).split(",") if part.strip()]


def env_seconds(name: str, default: str) -> float:
    try:
        seconds = float(os.environ.get(name) or default)
    except ValueError:
        seconds = 0.0
    if not 0 < seconds < float("inf"):
        raise ImproperlyConfigured(f"{name} must be a positive number of seconds.")
    return seconds
