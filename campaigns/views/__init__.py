"""Plain Django views: the health probe, and the error answers of the whole site.

Under /api/ every error is JSON (`{"detail": ...}`), whoever raised it: DRF's own exceptions go
through `exception_handler`, and what happens outside DRF (an unknown URL, a body over Django's
upload limit, a crash) through the handler400/403/404/500 set in config/urls.py.
"""

from __future__ import annotations

import sys
from typing import Any

from django.core.exceptions import RequestDataTooBig
from django.core.exceptions import ValidationError as DjangoValidationError
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views import defaults
from django.views.decorators.csrf import csrf_exempt
from rest_framework import exceptions
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from campaigns import dependencies
from campaigns.api.bodies import Conflict, body_too_large, too_large_detail
from campaigns.models import (
    CampaignClosed,
    CommitOverTeamBudget,
    CommitRefused,
    PlanFrozen,
    RunsStillRunning,
)


def health(request: HttpRequest) -> JsonResponse:
    """Up or down, for anyone (the only endpoint open to anonymous callers); which dependency
    is down and how long each took only for a signed-in staff user or a user's API token
    (`campaigns.dependencies`). 503 with Retry-After when any dependency is down."""
    checks = dependencies.check_all()
    up = all(check["ok"] for check in checks.values())
    body: dict[str, Any] = {"status": "ok" if up else "unavailable"}
    if _may_see_details(request):
        body["dependencies"] = checks
    response = JsonResponse(body, status=200 if up else 503)
    if not up:
        response["Retry-After"] = str(dependencies.retry_after())
    return response


def _may_see_details(request: HttpRequest) -> bool:
    user = getattr(request, "user", None)
    if user is not None and user.is_authenticated and user.is_staff:
        return True
    # The API's own token class: tokens are looked up by their digest (docs/domain.md §26).
    from campaigns.api.authentication import TokenAuthentication

    try:
        found = TokenAuthentication().authenticate(request)  # type: ignore[arg-type]
    except Exception:
        return False
    return found is not None and bool(getattr(found[0], "is_active", False))


# --- Errors --------------------------------------------------------------------------------


def _is_api(request: HttpRequest) -> bool:
    return request.path.startswith("/api/")


@csrf_exempt  # nothing to protect, and a CSRF page would not be JSON
def api_not_found(request: HttpRequest, *args: Any, **kwargs: Any) -> JsonResponse:
    """The last URL pattern under /api/: an unknown API path is a JSON 404 in every mode
    (handler404 only applies with DEBUG off, and APPEND_SLASH would raise on a POST)."""
    return JsonResponse({"detail": "Not found."}, status=404)


def bad_request(request: HttpRequest, exception: Exception) -> HttpResponse:
    if _is_api(request):
        if isinstance(exception, RequestDataTooBig):
            return body_too_large()
        return JsonResponse({"detail": "Bad request."}, status=400)
    return defaults.bad_request(request, exception)


def permission_denied(request: HttpRequest, exception: Exception) -> HttpResponse:
    if _is_api(request):
        return JsonResponse({"detail": str(exception) or "Permission denied."}, status=403)
    return defaults.permission_denied(request, exception)


def page_not_found(request: HttpRequest, exception: Exception) -> HttpResponse:
    if _is_api(request):
        return JsonResponse({"detail": "Not found."}, status=404)
    return defaults.page_not_found(request, exception)


def server_error(request: HttpRequest) -> HttpResponse:
    # Called while the exception is being handled: a dependency outage is a 503 the client
    # may retry (campaigns.dependencies), not a bug.
    if dependencies.is_unavailable(sys.exc_info()[1]):
        return dependencies.unavailable_response(_is_api(request))
    if _is_api(request):
        return JsonResponse({"detail": "Server error."}, status=500)
    return defaults.server_error(request)


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    """DRF's handler, plus the model layer's own refusals turned into 400/409, never 500."""
    if isinstance(exc, RequestDataTooBig):
        return Response(too_large_detail(), status=413)
    if isinstance(exc, CommitRefused):
        return Response(
            {"detail": f"The plan cannot be committed: {exc}.", "problems": exc.problems},
            status=409,
        )
    if isinstance(exc, CommitOverTeamBudget):
        return Response(
            {
                "detail": f"The commit would take the team over its budget: {exc}. Send "
                '{"over_team_budget": true} to commit anyway.',
                "over_team_budget": exc.periods,
            },
            status=409,
        )
    if isinstance(exc, RunsStillRunning):
        return Response(
            {"detail": f"The campaign cannot be closed: {exc}.", "running_runs": exc.run_ids},
            status=409,
        )
    if isinstance(exc, CampaignClosed):
        return Response({"detail": str(exc), "status": "closed"}, status=409)
    if isinstance(exc, PlanFrozen):
        exc = Conflict(str(exc))
    elif isinstance(exc, DjangoValidationError):
        if hasattr(exc, "error_dict"):
            detail: Any = {
                ("non_field_errors" if field == "__all__" else field): messages
                for field, messages in exc.message_dict.items()
            }
        else:
            detail = {"non_field_errors": exc.messages}
        exc = exceptions.ValidationError(detail)
    return drf_exception_handler(exc, context)
