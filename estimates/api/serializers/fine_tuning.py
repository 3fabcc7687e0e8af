"""``training.lora``: the adapter's rank and target modules (docs/domain.md §24.1)."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from estimates.api.serializers.base import StrictSerializer, ranged
from estimates.domain import formulas

_NAMES = [*formulas.TARGET_MODULES, *formulas.FUSED_MODULES, *formulas.MODULE_ALIASES]
_SHAPE_FIELDS = {"name", "in_features", "out_features", "count"}
_LIMITS = {
    name: formulas.LIMITS[f"training.lora.module.{name}"]
    for name in ("in_features", "out_features", "count")
}


def _shape_schema() -> dict[str, Any]:
    def bounded(name: str) -> dict[str, Any]:
        low, high = _LIMITS[name]
        return {"type": "integer", "minimum": low, "maximum": high}

    return {
        "type": "object",
        "properties": {
            "name": {"type": "string", "maxLength": 60},
            "in_features": bounded("in_features"),
            "out_features": bounded("out_features"),
            "count": {**bounded("count"), "default": 1},
        },
        "required": ["name", "in_features", "out_features"],
        "additionalProperties": False,
    }


@extend_schema_field(
    {
        "oneOf": [
            {"type": "string", "enum": ["all-linear"]},
            {
                "type": "array",
                "items": {"oneOf": [{"type": "string", "enum": _NAMES}, _shape_schema()]},
                "minItems": 1,
                "maxItems": 64,
            },
        ]
    }
)
class TargetModulesField(serializers.Field[Any, Any, Any, Any]):
    """``"all-linear"``, or a list of module names (q k v o gate up down, the fused qkv and
    gate_up, or their Hugging Face ``_proj`` names) and module shapes (``{name, in_features,
    out_features, count}`` per layer)."""

    default_error_messages = {
        "invalid": 'Give "all-linear", or a list of q, k, v, o, gate, up, down, qkv, gate_up '
        "(or their _proj names) and shapes {{name, in_features, out_features, count}}.",
    }

    def to_internal_value(self, data: Any) -> str | tuple[Any, ...]:
        if data == "all-linear":
            return "all-linear"
        if not isinstance(data, list) or not data or len(data) > 64:
            self.fail("invalid")
        targets = [self._target(item) for item in data]
        return tuple(dict.fromkeys(targets))

    def _target(self, item: Any) -> Any:
        if isinstance(item, str) and item in _NAMES:
            return formulas.MODULE_ALIASES.get(item, item)
        if isinstance(item, dict) and set(item) <= _SHAPE_FIELDS and {"name"} <= set(item):
            return self._shape(item)
        self.fail("invalid")
        raise AssertionError  # fail() raises

    def _shape(self, item: dict[str, Any]) -> formulas.ModuleShape:
        name = item.get("name")
        values = {"count": 1, **{k: v for k, v in item.items() if k != "name"}}
        if not isinstance(name, str) or not 0 < len(name) <= 60:
            self.fail("invalid")
        for key, (low, high) in _LIMITS.items():
            value = values.get(key)
            if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
                raise serializers.ValidationError(f"{key} must be an integer in [{low}, {high}].")
        return formulas.ModuleShape(
            name=str(name),
            in_features=values["in_features"],
            out_features=values["out_features"],
            count=values["count"],
        )

    def to_representation(self, value: Any) -> Any:
        if isinstance(value, str):
            return value
        return [
            item
            if isinstance(item, str)
            else {
                "name": item.name,
                "in_features": item.in_features,
                "out_features": item.out_features,
                "count": item.count,
            }
            for item in value
        ]


class LoraSerializer(StrictSerializer):
    rank = ranged("training.lora.rank", default=16)
    target_modules = TargetModulesField(default="all-linear")
