"""Single sign-on with OpenID Connect (mozilla-django-oidc; README "Single sign-on").

- `DeskOIDCBackend`: a provider account is known by the issuer and subject of its ID token
  (`ledger.services.sso.sign_in_identity`), never by username or e-mail; its first sign-in
  makes a new user, unless the signed-in user started it from `link_identity`. Every call to
  the provider has a deadline (`OIDC_TIMEOUT`).
- `DeskCallbackView`: when the provider refuses a silent re-authentication (SessionRefresh:
  the account was disabled or signed out there), the session ends and its API tokens go.
- `api_token`: `POST /accounts/token/` (signed in, CSRF): a new API token that expires after
  `API_TOKEN_HOURS`, shown this once (only its digest is stored; docs/domain.md §26).
- `provider_logout_url`: signing out also ends the provider's session (its end_session
  endpoint, `OIDC_OP_LOGOUT_ENDPOINT`), so that signing in again asks for the password.
- `context`: tells the admin's login page whether to offer the provider.
Local passwords keep working: the backend is only installed when `OIDC_RP_CLIENT_ID` is set.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any
from urllib.parse import urlencode

from django.conf import settings
from django.contrib.auth import logout
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied, SuspiciousOperation
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect, JsonResponse
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_POST
from mozilla_django_oidc.auth import OIDCAuthenticationBackend
from mozilla_django_oidc.views import OIDCAuthenticationCallbackView

from campaigns.services.campaigns import real_user
from campaigns.services.keys import issue_api_token
from ledger.services import sso as sso_services

# The session key that marks a sign-in started by a signed-in user to link their account.
LINK_SESSION_KEY = "desk_oidc_link_user"


def _groups(claims: dict[str, Any]) -> list[str]:
    found = claims.get(getattr(settings, "OIDC_GROUPS_CLAIM", "groups") or "groups") or []
    if isinstance(found, str):
        found = [found]
    return [str(g) for g in found] if isinstance(found, list) else []


def _linking_user(request: HttpRequest | None) -> Any:
    """The signed-in user who asked to link a provider account, if this sign-in is theirs."""
    if request is None or not request.user.is_authenticated:
        return None
    asked = request.session.pop(LINK_SESSION_KEY, None)
    return request.user if asked == request.user.pk else None


class DeskOIDCBackend(OIDCAuthenticationBackend):  # type: ignore[misc]
    def get_or_create_user(self, access_token: str, id_token: str, payload: dict[str, Any]) -> Any:
        claims = self.get_userinfo(access_token, id_token, payload)
        issuer, subject = str(payload.get("iss") or ""), str(payload.get("sub") or "")
        if not (issuer and subject) or str(claims.get("sub") or "") != subject:
            raise SuspiciousOperation("the userinfo's subject is not the ID token's")
        expected = getattr(settings, "OIDC_OP_ISSUER", "")
        if expected and issuer != expected:
            raise SuspiciousOperation(f"ID token from issuer {issuer!r}, not {expected!r}")
        try:
            return sso_services.sign_in_identity(
                issuer=issuer,
                subject=subject,
                claims=claims,
                groups=_groups(claims),
                link_to=_linking_user(self.request),
            )
        except PermissionDenied:
            return None


class DeskCallbackView(OIDCAuthenticationCallbackView):  # type: ignore[misc]
    def get(self, request: HttpRequest) -> HttpResponse:
        # An error answer (prompt=none refused) to a signed-in session: the provider no
        # longer vouches for this user. The parent signs the session out; the tokens go too.
        if request.GET.get("error") and request.user.is_authenticated:
            sso_services.revoke_api_tokens(user=request.user, acting_user=request.user)
        return super().get(request)  # type: ignore[no-any-return]


@login_required
@require_POST
def link_identity(request: HttpRequest) -> HttpResponse:
    """POST (signed in, CSRF): sign in at the provider to link that account to this user."""
    if request.user.is_superuser:
        raise PermissionDenied("a superuser's account is never linked to the provider")
    request.session[LINK_SESSION_KEY] = request.user.pk
    return HttpResponseRedirect(reverse("oidc_authentication_init"))


@login_required
@require_POST
def api_token(request: HttpRequest) -> JsonResponse:
    hours = float(getattr(settings, "API_TOKEN_HOURS", 24))
    expires_at = timezone.now() + timedelta(hours=hours)
    person = real_user(request.user)
    if person is None:  # login_required lets only a signed-in person here
        raise PermissionDenied
    _token, raw = issue_api_token(
        owner=person,
        acting_user=person,
        name="signed-in session",
        expires_at=expires_at,
    )
    response = JsonResponse(
        {"token": raw, "header": f"Authorization: Token {raw}", "expires_at": expires_at}
    )
    response["Cache-Control"] = "no-store"
    return response


def provider_logout_url(request: HttpRequest) -> str:
    """mozilla-django-oidc's OIDC_OP_LOGOUT_URL_METHOD: the provider's end_session endpoint
    with the ID token as hint, back to the login page after; the login page without one."""
    back = request.build_absolute_uri(str(settings.LOGOUT_REDIRECT_URL))
    endpoint = getattr(settings, "OIDC_OP_LOGOUT_ENDPOINT", "")
    id_token = request.session.get("oidc_id_token")
    if not endpoint or not id_token:
        return back
    query = {"id_token_hint": id_token, "post_logout_redirect_uri": back}
    return f"{endpoint}?{urlencode(query)}"


@require_POST
def sign_out(request: HttpRequest) -> HttpResponse:
    """The admin's "Log out" (POST, CSRF): ends this session, then the provider's."""
    url = provider_logout_url(request)
    logout(request)
    return HttpResponseRedirect(url)


def context(request: HttpRequest) -> dict[str, Any]:
    return {"oidc_enabled": bool(getattr(settings, "OIDC_RP_CLIENT_ID", ""))}
