"""Single sign-on through a REAL OpenID Connect provider (README "Single sign-on"): a second
Django process runs django-oauth-toolkit's OIDC provider (tests/oidc_provider/) on a loopback
port with an RS256 key made here; headless Chromium signs in through it and lands in the
right team with the right role; a user without the groups claim gets no team."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import unittest
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.contrib.staticfiles.testing import StaticLiveServerTestCase
from django.test import override_settings

from campaigns.models import Membership, Team
from tests.browser import CHROMEDRIVER, CHROMIUM, start_chromium

ROOT = Path(__file__).resolve().parent.parent
CLIENT_ID, CLIENT_SECRET = "campaign-desk", "s3cret-of-the-test-client"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _rsa_pem() -> str:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ).decode()


PORT = _free_port()
OP = f"http://127.0.0.1:{PORT}/o"


@pytest.mark.browser
@unittest.skipUnless(CHROMIUM and CHROMEDRIVER, "needs headless Chromium and chromedriver")
@override_settings(
    OIDC_RP_CLIENT_ID=CLIENT_ID,
    OIDC_RP_CLIENT_SECRET=CLIENT_SECRET,
    OIDC_OP_AUTHORIZATION_ENDPOINT=f"{OP}/authorize/",
    OIDC_OP_TOKEN_ENDPOINT=f"{OP}/token/",
    OIDC_OP_USER_ENDPOINT=f"{OP}/userinfo/",
    OIDC_OP_JWKS_ENDPOINT=f"{OP}/.well-known/jwks.json",
    OIDC_RP_SIGN_ALGO="RS256",
    OIDC_TEAM_ROLES="desk-a:owner=desk-a-owners,desk-a:planner=ml|desk-a-planners,"
    "desk-b:viewer=all-staff",
    AUTHENTICATION_BACKENDS=[
        "axes.backends.AxesStandaloneBackend",  # as config/settings.py installs them
        "ledger.sso.DeskOIDCBackend",
        "django.contrib.auth.backends.ModelBackend",
    ],
)
class SingleSignOnTests(StaticLiveServerTestCase):
    @classmethod
    def setUpClass(cls) -> None:
        super().setUpClass()
        cls.tmp = tempfile.mkdtemp(prefix="cd-oidc-")
        cls.addClassCleanup(shutil.rmtree, cls.tmp, ignore_errors=True)  # the provider's database
        env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "tests.oidc_provider.settings",
            "OIDC_PROVIDER_DB": str(Path(cls.tmp) / "provider.sqlite3"),
            "OIDC_PROVIDER_KEY": _rsa_pem(),
            "OIDC_PROVIDER_ISSUER": OP,
            "PYTHONPATH": str(ROOT),
        }
        env.pop("DATABASE_URL", None)
        users = ["olga:pw-olga:desk-a-owners|ml", "nora:pw-nora:"]
        subprocess.run(
            [sys.executable, "tests/oidc_provider/setup_provider.py",
             f"{cls.live_server_url}/oidc/callback/", CLIENT_ID, CLIENT_SECRET, *users],
            cwd=ROOT, env=env, check=True, timeout=120,
        )  # fmt: skip
        cls.provider = subprocess.Popen(
            [sys.executable, "-m", "django", "runserver", f"127.0.0.1:{PORT}", "--noreload"],
            cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", PORT), timeout=1).close()
                break
            except OSError:
                time.sleep(0.3)
        else:
            cls.provider.kill()
            raise RuntimeError("the OIDC provider did not start")

    @classmethod
    def tearDownClass(cls) -> None:
        cls.provider.terminate()
        cls.provider.wait(timeout=20)
        super().tearDownClass()

    def setUp(self) -> None:
        Team.objects.create(name="desk-a")
        Team.objects.create(name="desk-b")

    def sign_in(self, username: str) -> str:
        from selenium.webdriver.common.by import By
        from selenium.webdriver.support.ui import WebDriverWait

        browser = start_chromium(1366, 768)
        try:
            browser.set_page_load_timeout(60)
            browser.get(f"{self.live_server_url}/admin/login/?next=/admin/")
            browser.find_element(By.ID, "oidc-login-link").click()
            WebDriverWait(browser, 30).until(lambda b: f":{PORT}/accounts/login/" in b.current_url)
            browser.find_element(By.NAME, "username").send_keys(username)
            browser.find_element(By.NAME, "password").send_keys(f"pw-{username}")
            browser.find_element(By.ID, "provider-submit").click()
            WebDriverWait(browser, 30).until(
                lambda b: b.current_url.startswith(self.live_server_url)
            )
            WebDriverWait(browser, 30).until(lambda b: "/oidc/callback/" not in b.current_url)
            return str(browser.page_source)
        finally:
            browser.quit()

    def test_groups_become_a_team_and_a_role_and_no_groups_no_team(self) -> None:
        page = self.sign_in("olga")
        olga = get_user_model().objects.get(username="olga")
        self.assertEqual(olga.email, "olga@example.org")
        self.assertEqual(
            dict(Membership.objects.filter(user=olga).values_list("team__name", "role")),
            {"desk-a": "owner"},
        )
        self.assertTrue(olga.is_staff)
        self.assertIn('id="logout-form"', page)  # in the admin, signed in
        self.assertFalse(olga.has_usable_password())
        # A token for the API, from the signed-in session.
        self.client.force_login(olga)
        token = self.client.get("/accounts/token/").json()["token"]
        team = Team.objects.get(name="desk-a")
        answer = self.client.get(
            f"/api/v1/teams/{team.pk}/budget/", HTTP_AUTHORIZATION=f"Token {token}"
        )
        self.assertEqual(answer.status_code, 200)
        self.client.logout()

        page = self.sign_in("nora")
        nora = get_user_model().objects.get(username="nora")
        self.assertFalse(Membership.objects.filter(user=nora).exists())
        self.assertFalse(nora.is_staff)
        self.assertIn("not authorized to access this page", page)
