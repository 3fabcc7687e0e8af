"""The provider's claims: the user's username, e-mail and groups (the Django groups the test
puts them in), in the ID token and at the userinfo endpoint."""

from __future__ import annotations

from typing import Any

from oauth2_provider.oauth2_validators import OAuth2Validator


class GroupsValidator(OAuth2Validator):  # type: ignore[misc]
    oidc_claim_scope = None  # every claim whatever the scopes: a test provider

    def get_additional_claims(self, request: Any) -> dict[str, Any]:
        user = request.user
        claims: dict[str, Any] = {
            "preferred_username": user.username,
            "email": user.email,
            "given_name": user.first_name,
        }
        groups = sorted(user.groups.values_list("name", flat=True))
        if groups:
            claims["groups"] = groups
        return claims

    # prompt=none (the service's session refresh): answered without a page, from the
    # provider's own session; a disabled account has none, so the answer is login_required.
    def validate_silent_login(self, request: Any) -> bool:
        user = getattr(request, "user", None)
        return bool(user is not None and user.is_authenticated and user.is_active)

    def validate_silent_authorization(self, request: Any) -> bool:
        return True  # the client is trusted (skip_authorization)
