"""Admin pages whose rows a service writes (docs/architecture.md §2: services are the only
writers). The form validates; `write_row` calls the service and returns the row it wrote; the
admin then goes on (its log entry, messages, redirect, `response_add`) with that row adopted
into the object it was holding, never a second row saved by `form.save()`."""

from __future__ import annotations

from typing import Any

from django.db import models
from django.http import HttpRequest


def adopt(obj: models.Model, row: models.Model) -> None:
    """Make the admin's unsaved ``obj`` the row the service wrote: its fields and its state."""
    obj.__dict__.update({k: v for k, v in row.__dict__.items() if k != "_state"})
    obj._state = row._state


class ServiceWrittenRows:
    """ModelAdmin mixin (before the ModelAdmin in the bases): `save_model` is `write_row`."""

    def write_row(
        self, request: HttpRequest, obj: Any, form: Any, change: bool
    ) -> models.Model:  # pragma: no cover - every page using the mixin defines it
        raise NotImplementedError

    def save_model(self, request: HttpRequest, obj: Any, form: Any, change: bool) -> None:
        adopt(obj, self.write_row(request, obj, form, change))
