"""No shell needed for a team (issue 18, item 4): an owner invites a new member by e-mail on
the team page; the person creates their account from the link, accepts, and signs in with it
(issue 32: by invitation, accepted by the invitee; docs/domain.md §1.5)."""

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

    def test_a_new_address_is_invited_and_the_person_joins_through_the_link(self) -> None:
        self.client.force_login(self.owner)
        url = reverse("admin:campaigns_team_change", args=[self.team.pk])
        data = form_data(self.client.get(url).content.decode(), "team_form")
        n = int(data["invitations-TOTAL_FORMS"])
        data |= {
            "invitations-TOTAL_FORMS": str(n + 1),
            f"invitations-{n}-email": "alice@example.org",
            f"invitations-{n}-role": "viewer",
        }
        with self.captureOnCommitCallbacks(execute=True):
            self.assertEqual(self.client.post(url, data).status_code, 302)
        [message] = mail.outbox
        self.assertEqual(message.to, ["alice@example.org"])
        self.assertNotIn("manage.py", message.body)
        link = re.search(r"http://testserver(/accounts/invitations/\S+/)", message.body).group(1)
        self.client.logout()
        self.assertContains(self.client.get(link), "Create my account and join nlp")
        passphrase = "a long passphrase 42"
        joined = self.client.post(
            link,
            {
                "action": "create",
                "username": "alice",
                "password1": passphrase,
                "password2": passphrase,
            },
            follow=True,
        )
        self.assertContains(joined, "You are a member of nlp (viewer).")
        alice = get_user_model().objects.get(email="alice@example.org")
        self.assertEqual(Membership.objects.get(team=self.team, user=alice).role, "viewer")
        self.client.logout()
        # The login lockout (django-axes) counts by the request's client: login() must pass one.
        self.assertTrue(
            self.client.login(request=HttpRequest(), username="alice", password=passphrase)
        )
