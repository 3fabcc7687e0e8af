"""What several campaigns serializers share: the integer bounds of the database's columns and
``scope``, which narrows a related field to the objects of the campaign (or run) at hand.

The field classes themselves (strict types, hours, money, identifiers) are in
``campaigns.api.fields``, shared with the other apps' serializers.
"""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

BIGINT_MAX = 2**63 - 1
INT_MAX = 2**31 - 1


def scope(field: Any, queryset: Any) -> None:
    """Narrow a related field (or the child of a many=True one) to `queryset`."""
    target = field.child_relation if isinstance(field, serializers.ManyRelatedField) else field
    target.queryset = queryset
