"""``training.lora``: the adapter's rank and target modules (docs/domain.md §24.1)."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from estimates.api.serializers.base import StrictSerializer, ranged
from estimates.domain import formulas


@extend_schema_field(
    {
        "oneOf": [
            {"type": "string", "enum": ["all-linear"]},
            {
                "type": "array",
                "items": {"type": "string", "enum": list(formulas.TARGET_MODULES)},
                "minItems": 1,
                "maxItems": len(formulas.TARGET_MODULES),
            },
        ]
    }
)
class TargetModulesField(serializers.Field[Any, Any, Any, Any]):
    """``"all-linear"`` or a list of ``q k v o gate up down``."""

    default_error_messages = {
        "invalid": 'Give "all-linear" or a list of q, k, v, o, gate, up, down.',
    }

    def to_internal_value(self, data: Any) -> str | tuple[str, ...]:
        if data == "all-linear":
            return "all-linear"
        if (
            isinstance(data, list)
            and data
            and all(isinstance(t, str) and t in formulas.TARGET_MODULES for t in data)
        ):
            return tuple(dict.fromkeys(data))
        self.fail("invalid")
        raise AssertionError  # fail() raises

    def to_representation(self, value: Any) -> Any:
        return value if isinstance(value, str) else list(value)


class LoraSerializer(StrictSerializer):
    rank = ranged("training.lora.rank", default=16)
    target_modules = TargetModulesField(default="all-linear")
