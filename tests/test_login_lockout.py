"""Brute force on the admin's sign-in (issue 19, Low): 30 wrong passwords, then the right one,
were let in. Now, after LOGIN_FAILURE_LIMIT wrong passwords from one address, that username is
refused there, the right password included, with a 429 page (django-axes; README, Production
notes); other addresses and other users are not; a success before the limit forgets the
failures. Every attempt is a real POST through the admin's login form."""

from __future__ import annotations

from django.test import TestCase, override_settings

from campaigns.tests.factories import make_user

LOGIN = "/admin/login/?next=/admin/"
RIGHT = "the right passphrase 42"


def sign_in(client, username: str, password: str, address: str = "203.0.113.7"):  # type: ignore[no-untyped-def]
    return client.post(
        LOGIN,
        {"username": username, "password": password, "next": "/admin/"},
        REMOTE_ADDR="10.0.0.2",  # the proxy
        HTTP_X_FORWARDED_FOR=address,  # the client, as the proxy saw it
    )


@override_settings(TRUSTED_PROXIES=("10.0.0.2/32",))  # the proxy (config/client_ip.py)
class LoginLockoutTests(TestCase):
    @classmethod
    def setUpTestData(cls) -> None:
        cls.olga = make_user("olga", password=RIGHT)
        make_user("pia", password=RIGHT)

    def test_thirty_wrong_passwords_lock_the_right_one_out_with_a_429_page(self) -> None:
        for attempt in range(30):
            answer = sign_in(self.client, "olga", f"guess {attempt}")
            self.assertIn(answer.status_code, (200, 429), attempt)
        answer = sign_in(self.client, "olga", RIGHT)
        self.assertEqual(answer.status_code, 429)
        self.assertContains(answer, "Too many wrong passwords", status_code=429)
        self.assertNotIn("_auth_user_id", self.client.session)
        # The lock is by username and address: the same user elsewhere and another user here
        # still sign in.
        elsewhere = sign_in(self.client, "olga", RIGHT, address="198.51.100.9")
        self.assertEqual(elsewhere.status_code, 302)
        self.client.logout()
        self.assertEqual(sign_in(self.client, "pia", RIGHT).status_code, 302)

    def test_the_lock_starts_at_the_limit_and_the_form_answers_before_it(self) -> None:
        with override_settings(AXES_FAILURE_LIMIT=3):
            answers = [sign_in(self.client, "olga", "wrong").status_code for _ in range(3)]
        self.assertEqual(answers, [200, 200, 429])

    def test_a_success_before_the_limit_forgets_the_failures(self) -> None:
        with override_settings(AXES_FAILURE_LIMIT=3):
            sign_in(self.client, "olga", "wrong")
            sign_in(self.client, "olga", "wrong")
            self.assertEqual(sign_in(self.client, "olga", RIGHT).status_code, 302)
            self.client.logout()
            sign_in(self.client, "olga", "wrong")
            sign_in(self.client, "olga", "wrong")
            self.assertEqual(sign_in(self.client, "olga", RIGHT).status_code, 302)
