"""OpenAPI additions for drf-spectacular: the ingest-key security scheme, and what every
operation may answer besides its success (JSON errors, see campaigns/views/__init__.py) plus the
Idempotency-Key header of every POST (campaigns/api/idempotency.py).

The hook is generic on purpose: it documents the operations of every app under /api/v1/, so
that a schema-driven test (campaigns/tests/test_schema.py) holds them all to their document.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.views import SpectacularSwaggerSplitView
from rest_framework.renderers import JSONRenderer

ERROR_SCHEMA = {
    "description": 'A JSON error: {"detail": "..."}, or DRF field errors {"field": ["..."]}.',
    "properties": {"detail": {"type": "string"}},
}
ERRORS = {
    "400": "Bad input: field errors name the field; malformed JSON.",
    "401": "No valid credentials.",
    "403": "Your role (or ingest key) does not allow this.",
    "404": "Not found, or not in your teams.",
    "405": "This resource refuses the method.",
    "409": "The object's state refuses this (e.g. a committed plan, a stopped run).",
    "413": "The request is too large (e.g. over 10,000 metric points).",
    "415": "Send JSON.",
    "422": "This Idempotency-Key was used for another request.",
    "429": "Too many requests: see Retry-After.",
}
WRITE_ONLY = {"400", "409", "413", "415", "422"}
METHODS = {"get", "post", "put", "patch", "delete", "head", "options"}
IDEMPOTENCY_KEY = {
    "name": "Idempotency-Key",
    "in": "header",
    "required": False,
    "description": "Any POST: a retry with the same key and body replays the stored answer "
    "and creates nothing; the same key with another body answers 422.",
    "schema": {"type": "string", "minLength": 1, "maxLength": 200, "pattern": "^[!-~]+$"},
}


class IngestKeyScheme(OpenApiAuthenticationExtension):  # type: ignore[no-untyped-call]
    target_class = "campaigns.api.authentication.IngestKeyAuthentication"
    name = "ingestKey"

    def get_security_definition(self, auto_schema: Any) -> dict[str, Any]:
        return {
            "type": "http",
            "scheme": "bearer",
            "description": "A campaign ingest key: appends run data to its one campaign.",
        }


def add_error_responses(result: dict[str, Any], generator: Any, **kwargs: Any) -> dict[str, Any]:
    schemas = result.setdefault("components", {}).setdefault("schemas", {})
    schemas["Error"] = ERROR_SCHEMA
    error_ref = {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
    for operations in result.get("paths", {}).values():
        for method, operation in operations.items():
            if method not in METHODS:
                continue
            writes = method in {"post", "put", "patch"}
            # A read with query parameters (limit, offset) refuses bad ones with a 400 too.
            queried = any(p.get("in") == "query" for p in operation.get("parameters", []))
            responses = operation.setdefault("responses", {})
            for code, description in ERRORS.items():
                # A DELETE of a committed plan's row is refused as a state conflict.
                also = (code == "400" and queried) or (code == "409" and method == "delete")
                if code in WRITE_ONLY and not writes and not also:
                    continue
                responses.setdefault(code, {"description": description, "content": error_ref})
            if method == "post":
                parameters = operation.setdefault("parameters", [])
                if not any(p.get("name") == "Idempotency-Key" for p in parameters):
                    parameters.append(dict(IDEMPOTENCY_KEY))
    return result


class SwaggerDocs(SpectacularSwaggerSplitView):
    """The docs page (/api/v1/docs/). A refusal (an ingest key, no login) answers JSON naming
    why: the page's HTML renderer would say only "403 Forbidden"."""

    def handle_exception(self, exc: Exception) -> Any:
        response = super().handle_exception(exc)
        self.request.accepted_renderer = JSONRenderer()
        self.request.accepted_media_type = "application/json"
        return response
