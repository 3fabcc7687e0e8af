"""The columns a person chose for the runs table (docs/domain.md §5.10), remembered per user."""

from __future__ import annotations

from django.conf import settings
from django.db import models


class RunTableLayout(models.Model):
    """One row per user: the column keys of the runs table in order (``field:status``,
    ``metric:loss:best``, ``config:seed``; campaigns/domain/runs_table.py parses them)."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="run_table_layout"
    )
    columns = models.JSONField(default=list)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"runs table of {self.user_id}: {len(self.columns)} columns"
