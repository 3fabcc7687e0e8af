"""Remembering the runs table's columns per person (docs/domain.md §5.10)."""

from __future__ import annotations

from collections.abc import Sequence

from django.contrib.auth.models import AnonymousUser, User
from django.core.exceptions import ValidationError
from django.db import transaction

from campaigns.domain import runs_table as table
from campaigns.models import RunTableLayout


@transaction.atomic
def remember_columns(
    *, acting_user: User | AnonymousUser, columns: Sequence[str]
) -> RunTableLayout:
    """Store the person's choice of columns (in order); a key that is no column is refused
    naming it."""
    try:
        parsed = table.parse_columns(columns)
    except table.ColumnRefused as exc:
        raise ValidationError({"columns": str(exc)}) from exc
    layout, _created = RunTableLayout.objects.update_or_create(
        user_id=acting_user.pk, defaults={"columns": [c.key for c in parsed[1:]]}
    )
    return layout
