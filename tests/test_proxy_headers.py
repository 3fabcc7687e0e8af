"""Proxy headers are believed only from the configured proxies (issue 32, item 6): gunicorn
reached directly took any `X-Forwarded-For`, so rotating it bypassed the login lockout, and
any `X-Forwarded-Proto: https` made a plain request look secure. `TRUSTED_PROXIES` names the
proxy (config/client_ip.py; docker-compose gives Caddy a fixed address)."""

from __future__ import annotations

import http.client
import re
import urllib.parse
from typing import Any

import pytest
from django.contrib.auth.hashers import PBKDF2PasswordHasher
from django.test import RequestFactory, TestCase, override_settings

from campaigns.tests.factories import make_user
from config.client_ip import ProxyHeadersMiddleware, client_ip
from conftest import _database_url_for_worker
from tests.live_gunicorn import compose_gunicorn

RIGHT = "the right passphrase 42"


def _seen(request: object) -> object:
    return request


class BelievedOnlyFromTheProxy(TestCase):
    def through_middleware(self, remote: str, **headers: Any) -> Any:
        request = RequestFactory().get("/admin/", REMOTE_ADDR=remote, **headers)
        return ProxyHeadersMiddleware(_seen)(request)

    @override_settings(TRUSTED_PROXIES=("10.0.0.2/32",))
    def test_a_stranger_cannot_say_it_spoke_tls_or_name_its_address(self) -> None:
        headers = {"HTTP_X_FORWARDED_PROTO": "https", "HTTP_X_FORWARDED_FOR": "198.51.100.1"}
        stranger = self.through_middleware("203.0.113.5", **headers)
        self.assertFalse(stranger.is_secure())
        self.assertEqual(client_ip(stranger), "203.0.113.5")
        proxied = self.through_middleware("10.0.0.2", **headers)
        self.assertTrue(proxied.is_secure())
        self.assertEqual(client_ip(proxied), "198.51.100.1")

    @override_settings(TRUSTED_PROXIES=("10.0.0.0/8",))
    def test_entries_the_client_wrote_left_of_the_proxys_prove_nothing(self) -> None:
        chain = "1.2.3.4, 198.51.100.7, 10.0.0.9"  # client-written, then what the proxies saw
        proxied = self.through_middleware("10.0.0.2", HTTP_X_FORWARDED_FOR=chain)
        self.assertEqual(client_ip(proxied), "198.51.100.7")

    def test_no_proxy_is_trusted_unless_configured(self) -> None:
        proxied = self.through_middleware("127.0.0.1", HTTP_X_FORWARDED_FOR="198.51.100.1")
        self.assertEqual(client_ip(proxied), "127.0.0.1")


def _sign_in(port: int, password: str, forwarded_for: str) -> int:
    """The admin's login form through gunicorn: GET for the CSRF cookie, then POST."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=20)
    try:
        conn.request("GET", "/admin/login/")
        page = conn.getresponse()
        body = page.read().decode()
        cookie = re.search(r"csrftoken=([^;]+)", page.getheader("Set-Cookie") or "")
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', body)
        assert cookie and token, "no CSRF token on the login page"
        form = {"username": "olga", "password": password, "next": "/admin/"}
        conn.request(
            "POST",
            "/admin/login/?next=/admin/",
            urllib.parse.urlencode({**form, "csrfmiddlewaretoken": token.group(1)}),
            {
                "Content-Type": "application/x-www-form-urlencoded",
                "Cookie": f"csrftoken={cookie.group(1)}",
                "X-Forwarded-For": forwarded_for,
            },
        )
        answer = conn.getresponse()
        answer.read()
        return answer.status
    finally:
        conn.close()


def _attack(port: int) -> list[int]:
    """Three wrong passwords, each from a new X-Forwarded-For, then the right one."""
    answers = [_sign_in(port, f"guess {n}", f"198.51.100.{n + 1}") for n in range(3)]
    return [*answers, _sign_in(port, RIGHT, "198.51.100.99")]


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_rotating_x_forwarded_for_against_gunicorn_does_not_bypass_the_lockout() -> None:
    encoded = PBKDF2PasswordHasher().encode(RIGHT, "saltsaltsalt")  # gunicorn's own hashers
    make_user("olga").__class__.objects.filter(username="olga").update(password=encoded)
    # DEBUG: the admin's pages from the static sources (no collectstatic manifest here).
    env = {"LOGIN_FAILURE_LIMIT": "3", "TRUSTED_PROXIES": "", "DEBUG": "1"}
    with compose_gunicorn(_database_url_for_worker(), "test-proxy-gunicorn.log", env) as port:
        assert _attack(port) == [200, 200, 429, 429]


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_behind_a_trusted_proxy_each_forwarded_client_counts_alone() -> None:
    encoded = PBKDF2PasswordHasher().encode(RIGHT, "saltsaltsalt")
    make_user("olga").__class__.objects.filter(username="olga").update(password=encoded)
    env = {"LOGIN_FAILURE_LIMIT": "3", "TRUSTED_PROXIES": "127.0.0.1/32", "DEBUG": "1"}
    with compose_gunicorn(_database_url_for_worker(), "test-proxy-gunicorn.log", env) as port:
        assert _attack(port) == [200, 200, 200, 302]
