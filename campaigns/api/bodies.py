"""Answers the API's views, its middleware and the error views (campaigns/views) share: a
conflict (409), and a body over the size limit (DATA_UPLOAD_MAX_MEMORY_SIZE, 413)."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.http import HttpRequest, JsonResponse
from rest_framework import exceptions


def too_large_detail() -> dict[str, Any]:
    limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    return {
        "detail": f"The request body is too large: this server takes at most {limit} bytes.",
        "max_bytes": limit,
    }


def body_too_large() -> JsonResponse:
    """413 naming the limit, DATA_UPLOAD_MAX_MEMORY_SIZE bytes of body: Django's own check
    raises RequestDataTooBig, a SuspiciousOperation that would otherwise answer a bare 400."""
    return JsonResponse(too_large_detail(), status=413)


def body_exceeds_limit(request: HttpRequest) -> bool:
    """Whether the declared Content-Length is over DATA_UPLOAD_MAX_MEMORY_SIZE (None: no limit)."""
    limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    try:
        length = int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        return False
    return limit is not None and length > limit


class Conflict(exceptions.APIException):
    """409: the request is well formed but the object's state refuses it."""

    status_code = 409
    default_detail = "The object's current state does not allow this."
    default_code = "conflict"
