"""What every stateless calculator endpoint shares: who may call it, how a formulas' refusal
becomes a 400 naming its field, the schema of a calculator, and the GPU a body names.

Access: any signed-in person (token or session). Ingest keys are refused everywhere here: an
ingest key may only append run data to its campaign (docs/api.md), and none of this is run data.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import permissions, serializers
from rest_framework.request import Request

from campaigns.api.authentication import is_ingest
from campaigns.api.permissions import INGEST_ONLY
from catalog.domain import catalog
from estimates.api.serializers import CustomHardwareSerializer
from estimates.domain import formulas
from estimates.selectors.gpus import catalog_gpu


class SignedInPerson(permissions.BasePermission):
    """Any authenticated user, whatever their role: the calculator reads and writes nothing, so
    a viewer may use it too (the default TeamRole would ask POSTs for a planner)."""

    message = INGEST_ONLY

    def has_permission(self, request: Request, view: Any) -> bool:
        user = request.user
        return bool(user and user.is_authenticated and not is_ingest(user))


def nested_error(dotted: str, message: str) -> dict[str, Any]:
    """ "hardware.utilization" → {"hardware": {"utilization": [message]}}: DRF's nested shape."""
    detail: Any = [message]
    for part in reversed(dotted.split(".")):
        detail = {part: detail}
    return dict(detail)


_F = TypeVar("_F", bound=Callable[..., Any])


def field_error(error: formulas.EstimateInputError) -> serializers.ValidationError:
    """The formulas' refusal as a 400 naming its field in DRF's nested shape."""
    return serializers.ValidationError(nested_error(error.field, error.message))


def calculator_schema(body: type[Any], result: type[Any], summary: str) -> Callable[[_F], _F]:
    """A calculator endpoint's schema: the body it reads, its result, and 400 naming the field."""
    return extend_schema(
        request=body,
        responses={200: result, 400: OpenApiResponse(description="Field errors")},
        summary=summary,
    )


def hardware_spec(hardware: dict[str, Any], field: str = "hardware.gpu") -> catalog.GpuModel:
    """The accelerator a validated ``hardware`` section names: custom, or a catalog row (by
    name or alias); an unknown name is a 400 naming ``field``."""
    if "custom" in hardware:
        return CustomHardwareSerializer().as_spec(hardware["custom"])
    try:
        return catalog_gpu(hardware["gpu"], field, "; or describe it in hardware.custom")
    except formulas.EstimateInputError as error:
        raise field_error(error) from None
