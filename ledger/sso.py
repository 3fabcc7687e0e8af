"""Single sign-on with OpenID Connect (mozilla-django-oidc; README "Single sign-on").

- `DeskOIDCBackend`: users are created at their first sign-in (username from the
  `preferred_username` claim, else the e-mail), their name and e-mail kept up to date, and their
  team memberships set from the groups claim (`OIDC_GROUPS_CLAIM`, default `groups`) through
  `OIDC_TEAM_ROLES` (`ledger.services.sso.apply_groups`) at every sign-in.
- `api_token`: `GET /accounts/token/` (signed in): a new API token for the user, for
  `Authorization: Token <key>`, shown this once (only its digest is stored; docs/domain.md §26).
- `context`: tells the admin's login page whether to offer the provider.
Local passwords keep working: the backend is only installed when `OIDC_RP_CLIENT_ID` is set.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, JsonResponse
from mozilla_django_oidc.auth import OIDCAuthenticationBackend

from campaigns import services
from ledger.services.sso import apply_groups


def _groups(claims: dict[str, Any]) -> list[str]:
    found = claims.get(getattr(settings, "OIDC_GROUPS_CLAIM", "groups") or "groups") or []
    if isinstance(found, str):
        found = [found]
    return [str(g) for g in found] if isinstance(found, list) else []


class DeskOIDCBackend(OIDCAuthenticationBackend):  # type: ignore[misc]
    def get_username(self, claims: dict[str, Any]) -> str:
        name = claims.get("preferred_username") or claims.get("email") or claims.get("sub")
        return str(name)[:150]

    def filter_users_by_claims(self, claims: dict[str, Any]) -> Any:
        return self.UserModel.objects.filter(username=self.get_username(claims))

    def create_user(self, claims: dict[str, Any]) -> Any:
        user = self.UserModel.objects.create_user(
            self.get_username(claims), email=claims.get("email", "")
        )
        return self.update_user(user, claims)

    def update_user(self, user: Any, claims: dict[str, Any]) -> Any:
        user.email = claims.get("email", user.email) or user.email
        user.first_name = str(claims.get("given_name", user.first_name) or "")[:150]
        user.last_name = str(claims.get("family_name", user.last_name) or "")[:150]
        user.save()
        apply_groups(user=user, groups=_groups(claims))
        return user


@login_required
def api_token(request: HttpRequest) -> JsonResponse:
    _token, raw = services.issue_api_token(user=request.user, name="signed-in session")
    response = JsonResponse({"token": raw, "header": f"Authorization: Token {raw}"})
    response["Cache-Control"] = "no-store"
    return response


def context(request: HttpRequest) -> dict[str, Any]:
    return {"oidc_enabled": bool(getattr(settings, "OIDC_RP_CLIENT_ID", ""))}
