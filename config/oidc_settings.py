"""Single sign-on with OpenID Connect (README "Single sign-on"; mozilla-django-oidc): the
provider's settings, imported by name by config/settings.py, which also installs the app, its
middleware and backend. Without OIDC_RP_CLIENT_ID nothing changes: local passwords only."""

import os
import re

from config.env import env_seconds

OIDC_RP_CLIENT_ID = os.environ.get("OIDC_RP_CLIENT_ID", "")
OIDC_RP_CLIENT_SECRET = os.environ.get("OIDC_RP_CLIENT_SECRET", "")
OIDC_OP_AUTHORIZATION_ENDPOINT = os.environ.get("OIDC_OP_AUTHORIZATION_ENDPOINT", "")
OIDC_OP_TOKEN_ENDPOINT = os.environ.get("OIDC_OP_TOKEN_ENDPOINT", "")
OIDC_OP_USER_ENDPOINT = os.environ.get("OIDC_OP_USER_ENDPOINT", "")
OIDC_OP_JWKS_ENDPOINT = os.environ.get("OIDC_OP_JWKS_ENDPOINT", "")
OIDC_RP_SIGN_ALGO = os.environ.get("OIDC_RP_SIGN_ALGO", "RS256")
OIDC_RP_SCOPES = os.environ.get("OIDC_RP_SCOPES", "openid email profile")
OIDC_USE_PKCE = True
OIDC_GROUPS_CLAIM = os.environ.get("OIDC_GROUPS_CLAIM", "groups")
# TEAM:ROLE=GROUP[|GROUP…], comma-separated (ledger/domain/sso_roles.py).
OIDC_TEAM_ROLES = os.environ.get("OIDC_TEAM_ROLES", "")
LOGIN_REDIRECT_URL = "/admin/"
LOGOUT_REDIRECT_URL = "/admin/login/"
# Accounts are found by the ID token's issuer and subject (ledger/views/sso.py); with OIDC_OP_ISSUER
# set, a token from any other issuer is refused.
OIDC_OP_ISSUER = os.environ.get("OIDC_OP_ISSUER", "")
# Every call to the provider (token, userinfo, keys) gives up after this many seconds.
OIDC_TIMEOUT = env_seconds("OIDC_TIMEOUT", "10")
# Signing out ends the provider's session too (its end_session endpoint, with the ID token as
# hint): without it, "Log out" signed straight back in.
OIDC_OP_LOGOUT_ENDPOINT = os.environ.get("OIDC_OP_LOGOUT_ENDPOINT", "")
OIDC_STORE_ID_TOKEN = True
OIDC_OP_LOGOUT_URL_METHOD = "ledger.views.sso.provider_logout_url"
# Session refresh (mozilla-django-oidc's SessionRefresh): a provider-signed-in session asks the
# provider again (prompt=none) after this many seconds; a refusal (the account was disabled
# there) ends the session and deletes the user's API tokens (ledger.views.sso.DeskCallbackView).
OIDC_RENEW_ID_TOKEN_EXPIRY_SECONDS = int(env_seconds("OIDC_RENEW_SECONDS", "900"))
OIDC_CALLBACK_CLASS = "ledger.views.sso.DeskCallbackView"
OIDC_EXEMPT_URLS = [re.compile(r"^/(api|mlflow)/"), "/metrics"]
