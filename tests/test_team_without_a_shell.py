"""No shell needed for a team (issue 18, item 4): an owner adds members on the team page by
username or e-mail; a new member gets a one-time link that sets their password, then signs in."""

from __future__ import annotations

import re

from django.contrib.auth import get_user_model
from django.core import mail
from django.http import HttpRequest
from django.test import TestCase
from django.urls import reverse

from campaigns.models import Membership, Team
from campaigns.tests.factories import make_user
from tests.adminforms import form_data


class MembersFromTheTeamPage(TestCase):
    @classmethod
    def setUpTestData(cls) -> None:
        cls.team = Team.objects.create(name="nlp")
        cls.owner = make_user("olga", team=cls.team, role="owner")
        cls.bob = make_user("bob", email="bob@example.org")

    def setUp(self) -> None:
        self.client.force_login(self.owner)
        self.url = reverse("admin:campaigns_team_change", args=[self.team.pk])

    def add(self, name: str, role: str = "planner") -> object:
        data = form_data(self.client.get(self.url).content.decode(), "team_form")
        n = int(data["memberships-TOTAL_FORMS"])
        data.update(
            {
                "memberships-TOTAL_FORMS": str(n + 1),
                f"memberships-{n}-username": name,
                f"memberships-{n}-role": role,
            }
        )
        return self.client.post(self.url, data)

    def test_an_existing_user_by_username_or_by_e_mail(self) -> None:
        self.assertEqual(self.add("BOB@example.org").status_code, 302)
        self.assertEqual(Membership.objects.get(team=self.team, user=self.bob).role, "planner")

    def test_an_unknown_username_says_how_to_invite(self) -> None:
        answer = self.add("alice")
        self.assertEqual(answer.status_code, 200)
        self.assertContains(answer, "type their e-mail address instead")
        self.assertNotContains(answer, "manage.py")

    def test_a_new_address_is_invited_and_sets_a_password_through_the_link(self) -> None:
        with self.captureOnCommitCallbacks(execute=True):
            answer = self.add("alice@example.org", role="viewer")
        self.assertEqual(answer.status_code, 302)
        alice = get_user_model().objects.get(email="alice@example.org")
        self.assertEqual((alice.username, alice.has_usable_password()), ("alice", False))
        self.assertEqual(Membership.objects.get(team=self.team, user=alice).role, "viewer")
        [message] = mail.outbox
        self.assertEqual(message.to, ["alice@example.org"])
        link = re.search(r"http://testserver(/accounts/reset/\S+/)", message.body).group(1)
        self.client.logout()
        form = self.client.get(link, follow=True)
        self.assertContains(form, "new_password1")
        done = self.client.post(
            form.redirect_chain[-1][0] if form.redirect_chain else link,
            {"new_password1": "a long passphrase 42", "new_password2": "a long passphrase 42"},
            follow=True,
        )
        self.assertContains(done, "Password reset complete")
        alice.refresh_from_db()
        self.assertTrue(alice.check_password("a long passphrase 42"))
        # The link is one-time: once the password is set it no longer works.
        again = self.client.get(link, follow=True)
        self.assertNotContains(again, "new_password1")
        # The login lockout (django-axes) counts by the request's client: login() must pass one.
        self.assertTrue(
            self.client.login(
                request=HttpRequest(), username="alice", password="a long passphrase 42"
            )
        )
