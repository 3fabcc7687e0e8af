"""Single sign-on through a REAL OpenID Connect provider (README "Single sign-on"): a second
Django process runs django-oauth-toolkit's OIDC provider (tests/oidc_provider/) on a loopback
port with an RS256 key made here; headless Chromium signs in through it and lands in the
right team with the right role; a user without the groups claim gets no team."""

from __future__ import annotations

import unittest

import pytest
from django.contrib.auth import get_user_model
from django.contrib.staticfiles.testing import StaticLiveServerTestCase
from django.test import override_settings

from campaigns.models import Membership, Team
from tests.browser import CHROMEDRIVER, CHROMIUM, start_chromium
from tests.oidc_provider.live import OIDC_SETTINGS, PORT, Provider


@pytest.mark.browser
@unittest.skipUnless(CHROMIUM and CHROMEDRIVER, "needs headless Chromium and chromedriver")
@override_settings(
    **OIDC_SETTINGS,
    OIDC_TEAM_ROLES="desk-a:owner=desk-a-owners,desk-a:planner=ml|desk-a-planners,"
    "desk-b:viewer=all-staff",
)
class SingleSignOnTests(StaticLiveServerTestCase):
    @classmethod
    def setUpClass(cls) -> None:
        super().setUpClass()
        users = ["olga:pw-olga:desk-a-owners|ml", "nora:pw-nora:"]
        cls.provider = Provider(cls.live_server_url, users)

    @classmethod
    def tearDownClass(cls) -> None:
        cls.provider.stop()
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
        token = self.client.post("/accounts/token/").json()["token"]
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
