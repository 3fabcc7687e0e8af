"""Single sign-on cannot adopt accounts (issue 32, item 1), through the project's own identity
provider (django-oauth-toolkit, tests/oidc_provider/) as a live server, mozilla-django-oidc on
the service's side, and a `requests` session as the browser.

Before: a provider account named `admin` signed in as the local superuser, `carl_owner` became
team C's owner (C is not in the role mapping), `alice_owner` took over that account, lost its
hand-given role and had its e-mail overwritten; "Log out" signed straight back in; an account
disabled at the provider kept its session and its tokens; GET /accounts/token/ minted tokens
that never expired; calls to the provider had no deadline."""

from __future__ import annotations

import re
import socket
import threading
import time
from datetime import timedelta
from typing import Any
from urllib.parse import urlparse

import requests
from django.conf import settings
from django.contrib.auth import get_user_model
from django.test import LiveServerTestCase, TestCase, override_settings
from django.utils import timezone

from campaigns.models import ApiToken, Membership, Team
from campaigns.tests.factories import make_user
from ledger.models import OidcIdentity
from ledger.views.sso import DeskOIDCBackend
from tests.oidc_provider.live import OIDC_SETTINGS, PORT, Provider

PROVIDER_USERS = [
    "admin:pw-admin:",
    "carl_owner:pw-carl_owner:",
    "alice_owner:pw-alice_owner:",
    "olga:pw-olga:desk-a-owners",
    "alice_sso:pw-alice_sso:",
    "dora:pw-dora:desk-a-owners",
    "dina:pw-dina:desk-a-owners",
]


def _csrf(page: requests.Response) -> str:
    found = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text)
    assert found, f"no CSRF token at {page.url}"
    return found.group(1)


@override_settings(**OIDC_SETTINGS, OIDC_TEAM_ROLES="desk-a:owner=desk-a-owners")
class ProviderAccountsAreTheirOwn(LiveServerTestCase):
    @classmethod
    def setUpClass(cls) -> None:
        super().setUpClass()
        cls.provider = Provider(cls.live_server_url, PROVIDER_USERS)

    @classmethod
    def tearDownClass(cls) -> None:
        cls.provider.stop()
        super().tearDownClass()

    def setUp(self) -> None:
        self.desk_a = Team.objects.create(name="desk-a")
        self.team_c = Team.objects.create(name="team-c")
        self.browser = requests.Session()

    def sign_in(self, username: str, browser: requests.Session | None = None) -> requests.Response:
        """Through the admin's "sign in with the provider" link, to wherever it lands."""
        browser = browser or self.browser
        page = browser.get(f"{self.live_server_url}/oidc/authenticate/?next=/admin/", timeout=30)
        return self.at_the_provider(page, username, browser)

    def at_the_provider(
        self, page: requests.Response, username: str, browser: requests.Session
    ) -> requests.Response:
        """The provider's login form filled in, if the provider asks (it may have a session)."""
        if f":{PORT}/accounts/login/" not in page.url:
            return page
        form = {"username": username, "password": f"pw-{username}"}
        next_field = re.search(r'name="next" value="([^"]*)"', page.text)
        form["next"] = next_field.group(1).replace("&amp;", "&") if next_field else ""
        return browser.post(page.url, data={**form, "csrfmiddlewaretoken": _csrf(page)}, timeout=30)

    def signed_in_as(self, browser: requests.Session | None = None) -> Any:
        session_key = (browser or self.browser).cookies.get("sessionid")
        from django.contrib.sessions.backends.db import SessionStore

        user_id = (
            SessionStore(session_key=session_key).get("_auth_user_id") if session_key else None
        )
        return get_user_model().objects.filter(pk=user_id).first()

    def test_a_provider_admin_is_not_the_local_superuser(self) -> None:
        admin = get_user_model().objects.create_superuser("admin", "root@local", "x")
        self.sign_in("admin")
        user = self.signed_in_as()
        self.assertIsNotNone(user)
        self.assertNotEqual(user.pk, admin.pk)
        self.assertFalse(user.is_superuser or user.is_staff)
        self.assertNotEqual(user.username, "admin")

    def test_same_names_adopt_nothing_and_unmapped_teams_give_no_role(self) -> None:
        carl = make_user("carl_owner", team=self.team_c, role="owner")
        alice = make_user("alice_owner", team=self.desk_a, role="owner", email="alice@local")
        for name, local in (("carl_owner", carl), ("alice_owner", alice)):
            browser = requests.Session()
            self.sign_in(name, browser)
            user = self.signed_in_as(browser)
            self.assertIsNotNone(user, name)
            self.assertNotEqual(user.pk, local.pk)
            self.assertFalse(Membership.objects.filter(user=user).exists(), name)
        alice.refresh_from_db()
        self.assertEqual(alice.email, "alice@local")
        self.assertTrue(
            Membership.objects.filter(user=alice, team=self.desk_a, role="owner").exists()
        )
        self.assertTrue(
            Membership.objects.filter(user=carl, team=self.team_c, role="owner").exists()
        )

    def test_the_mapping_gives_roles_by_issuer_and_subject_and_later_sign_ins_find_the_same_user(
        self,
    ) -> None:
        self.sign_in("olga")
        olga = self.signed_in_as()
        identity = OidcIdentity.objects.get(user=olga)
        self.assertEqual(identity.issuer, OIDC_SETTINGS["OIDC_OP_ISSUER"])
        self.assertEqual(olga.email, "olga@example.org")
        self.assertEqual(Membership.objects.get(user=olga).role, "owner")
        get_user_model().objects.filter(pk=olga.pk).update(username="renamed", email="o@local")
        again = requests.Session()
        self.sign_in("olga", again)
        self.assertEqual(self.signed_in_as(again).pk, olga.pk)
        olga.refresh_from_db()
        self.assertEqual(olga.email, "o@local")  # the provider does not rewrite it

    def test_a_local_account_is_linked_only_by_its_owner_signed_in(self) -> None:
        alice = make_user("alice", team=self.desk_a, role="planner", email="alice@local")
        self.browser.cookies.set("sessionid", self._session_for(alice))
        page = self.browser.get(f"{self.live_server_url}/admin/", timeout=30)
        csrf = self.browser.cookies.get("csrftoken") or _csrf(page)
        provider_page = self.browser.post(
            f"{self.live_server_url}/accounts/sso/link/",
            data={"csrfmiddlewaretoken": csrf},
            headers={"Referer": f"{self.live_server_url}/admin/"},
            timeout=30,
        )
        self.at_the_provider(provider_page, "alice_sso", self.browser)
        identity = OidcIdentity.objects.get(user=alice)
        # From now on the provider's alice_sso signs in as alice, her hand-given role kept.
        later = requests.Session()
        self.sign_in("alice_sso", later)
        self.assertEqual(self.signed_in_as(later).pk, alice.pk)
        self.assertEqual(Membership.objects.get(user=alice).role, "planner")
        self.assertEqual(identity.subject, OidcIdentity.objects.get(user=alice).subject)

    def post_from_the_admin(self, path: str) -> requests.Response:
        """POST `path` as the admin's forms do: with the page's CSRF token."""
        page = self.browser.get(f"{self.live_server_url}/admin/", timeout=30)
        return self.browser.post(
            f"{self.live_server_url}{path}",
            data={"csrfmiddlewaretoken": _csrf(page)},
            headers={"Referer": f"{self.live_server_url}/admin/"},
            timeout=30,
        )

    def _session_for(self, user: Any) -> str:
        from django.test import Client

        client = Client()
        client.force_login(user, backend="django.contrib.auth.backends.ModelBackend")
        return str(client.cookies["sessionid"].value)

    def test_log_out_ends_the_providers_session_too(self) -> None:
        self.sign_in("dora")
        self.assertIsNotNone(self.signed_in_as())
        out = self.post_from_the_admin("/admin/logout/")
        self.assertEqual(urlparse(out.url).path, "/admin/login/")
        self.assertIsNone(self.signed_in_as())
        again = self.browser.get(f"{self.live_server_url}/oidc/authenticate/", timeout=30)
        self.assertIn(f":{PORT}/accounts/login/", again.url)  # asked for the password again

    @override_settings(OIDC_RENEW_ID_TOKEN_EXPIRY_SECONDS=1)
    def test_an_account_disabled_at_the_provider_loses_its_session_and_tokens(self) -> None:
        self.sign_in("dina")
        olga = self.signed_in_as()
        minted = self.post_from_the_admin("/accounts/token/")
        self.assertEqual(minted.status_code, 200)
        self.assertTrue(ApiToken.objects.filter(user=olga).exists())
        self.provider.disable("dina")
        time.sleep(1.5)  # past the ID token's renewal time: the next page asks the provider
        self.browser.get(f"{self.live_server_url}/admin/", timeout=30)
        self.assertIsNone(self.signed_in_as())
        self.assertFalse(ApiToken.objects.filter(user=olga).exists())


class ApiTokensFromASession(TestCase):
    def setUp(self) -> None:
        self.olga = make_user("olga", team=Team.objects.create(name="nlp"))
        self.client.force_login(self.olga)

    def test_get_mints_nothing_and_post_needs_the_csrf_token(self) -> None:
        self.assertEqual(self.client.get("/accounts/token/").status_code, 405)
        self.assertFalse(ApiToken.objects.exists())
        from django.test import Client

        strict = Client(enforce_csrf_checks=True)
        strict.force_login(self.olga)
        self.assertEqual(strict.post("/accounts/token/").status_code, 403)
        self.assertFalse(ApiToken.objects.exists())

    def test_a_minted_token_expires(self) -> None:
        answer = self.client.post("/accounts/token/").json()
        header = {"HTTP_AUTHORIZATION": f"Token {answer['token']}"}
        self.assertEqual(self.client.get("/api/v1/campaigns/", **header).status_code, 200)
        token = ApiToken.objects.get()
        self.assertIsNotNone(token.expires_at)
        ApiToken.objects.filter(pk=token.pk).update(
            expires_at=timezone.now() - timedelta(seconds=1)
        )
        self.client.logout()
        self.assertEqual(self.client.get("/api/v1/campaigns/", **header).status_code, 401)


class CallsToTheProviderHaveADeadline(TestCase):
    def test_the_deadline_is_configured(self) -> None:
        self.assertLessEqual(float(getattr(settings, "OIDC_TIMEOUT", None) or "inf"), 30)

    @override_settings(OIDC_TIMEOUT=1)  # the configured one (10 s) at a test's scale
    def test_a_provider_that_never_answers_fails_the_sign_in_within_the_deadline(self) -> None:
        silent = socket.socket()
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)  # accepts connections, never answers
        port = silent.getsockname()[1]
        outcome: list[BaseException | None] = []

        def exchange() -> None:
            with override_settings(OIDC_OP_TOKEN_ENDPOINT=f"http://127.0.0.1:{port}/token/"):
                try:
                    DeskOIDCBackend().get_token({"code": "x"})
                    outcome.append(None)
                except BaseException as exc:
                    outcome.append(exc)

        started = time.monotonic()
        worker = threading.Thread(target=exchange, daemon=True)
        worker.start()
        worker.join(10)
        silent.close()
        self.assertFalse(worker.is_alive(), "the token call hung past 10 s")
        self.assertLess(time.monotonic() - started, 5)
        self.assertIsInstance(outcome[0], requests.exceptions.Timeout)
