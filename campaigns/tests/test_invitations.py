"""Invitations (issue 32, docs/domain.md §1.5): an owner invites an address on the team page;
only the person who opens the link and accepts becomes a member, once; the owner's page says
the same whatever the address; two invitees are never merged into one account."""

from __future__ import annotations

import re
import threading
from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.core import mail
from django.db import connection
from django.test import Client, TestCase, TransactionTestCase, override_settings
from django.urls import reverse
from django.utils import timezone

from campaigns.models import Invitation, Membership, Team
from campaigns.tests.factories import make_user
from tests.adminforms import form_data

PASSWORD = "a long passphrase 42"
LINK = re.compile(r"http://testserver(/accounts/invitations/[A-Za-z0-9_-]+/)")


def invite_on_the_team_page(client: Client, team: Team, email: str, role: str) -> Any:
    """The owner's team page as a browser posts it, with one new invitation row."""
    url = reverse("admin:campaigns_team_change", args=[team.pk])
    data = form_data(client.get(url).content.decode(), "team_form")
    n = int(data["invitations-TOTAL_FORMS"])
    data |= {
        "invitations-TOTAL_FORMS": str(n + 1),
        f"invitations-{n}-email": email,
        f"invitations-{n}-role": role,
    }
    return client.post(url, data, follow=True)


def link_of(message: Any) -> str:
    found = LINK.search(message.body)
    assert found is not None, message.body
    return found.group(1)


def create_account(client: Client, link: str, username: str) -> Any:
    return client.post(
        link,
        {"action": "create", "username": username, "password1": PASSWORD, "password2": PASSWORD},
    )


class InvitingOnTheTeamPage(TestCase):
    @classmethod
    def setUpTestData(cls) -> None:
        cls.team = Team.objects.create(name="nlp")
        cls.owner = make_user("olga", team=cls.team, role="owner")
        cls.bob = make_user("bob", email="bob@example.org")

    def setUp(self) -> None:
        self.client.force_login(self.owner)

    def invite(self, email: str, role: str = "planner") -> Any:
        with self.captureOnCommitCallbacks(execute=True):
            return invite_on_the_team_page(self.client, self.team, email, role)

    def test_the_page_answers_the_same_for_an_account_and_an_unknown_address(self) -> None:
        known = self.invite("bob@example.org")
        unknown = self.invite("nobody@example.org")
        self.assertEqual((known.status_code, unknown.status_code), (200, 200))

        def said(answer: Any, email: str) -> str:
            return " | ".join(str(m) for m in answer.context["messages"]).replace(email, "ADDRESS")

        self.assertEqual(said(known, "bob@example.org"), said(unknown, "nobody@example.org"))
        self.assertIn("Nobody is added until the person accepts", said(known, "bob@example.org"))
        # Both are e-mailed, with the same words; neither is a member yet.
        self.assertEqual([m.to for m in mail.outbox], [["bob@example.org"], ["nobody@example.org"]])
        self.assertEqual(self.team.memberships.count(), 1)
        self.assertFalse(get_user_model().objects.filter(email="nobody@example.org").exists())

    def test_a_bad_address_is_refused_beside_the_field(self) -> None:
        answer = self.invite("not an address")
        self.assertContains(answer, "Enter a valid email address")
        self.assertFalse(Invitation.objects.exists())

    def test_members_cannot_be_added_by_username_any_more(self) -> None:
        url = reverse("admin:campaigns_team_change", args=[self.team.pk])
        data = form_data(self.client.get(url).content.decode(), "team_form")
        n = int(data["memberships-TOTAL_FORMS"])
        data |= {
            "memberships-TOTAL_FORMS": str(n + 1),
            f"memberships-{n}-username": "bob",
            f"memberships-{n}-role": "owner",
        }
        self.client.post(url, data)
        self.assertFalse(Membership.objects.filter(user=self.bob).exists())

    def test_an_owner_changes_a_role_and_removes_a_member(self) -> None:
        pia = make_user("pia", team=self.team, role="planner")
        url = reverse("admin:campaigns_team_change", args=[self.team.pk])
        data = form_data(self.client.get(url).content.decode(), "team_form")
        row = next(
            k for k, v in data.items() if k.endswith("-id") and v == str(pia.memberships.get().pk)
        )
        data[row.replace("-id", "-role")] = "viewer"
        self.assertEqual(self.client.post(url, data).status_code, 302)
        self.assertEqual(pia.memberships.get().role, "viewer")
        data[row.replace("-id", "-DELETE")] = "on"
        self.assertEqual(self.client.post(url, data).status_code, 302)
        self.assertFalse(pia.memberships.exists())

    def test_an_owner_revokes_a_pending_invitation_and_its_link_stops_working(self) -> None:
        self.invite("nobody@example.org")
        link = link_of(mail.outbox[-1])
        url = reverse("admin:campaigns_team_change", args=[self.team.pk])
        data = form_data(self.client.get(url).content.decode(), "team_form")
        data["invitations-0-DELETE"] = "on"
        self.assertEqual(self.client.post(url, data).status_code, 302)
        self.assertFalse(Invitation.objects.exists())
        self.client.logout()
        self.assertEqual(self.client.get(link).status_code, 404)

    def test_a_planner_neither_invites_nor_sees_the_invited_addresses(self) -> None:
        self.invite("nobody@example.org")
        pia = make_user("pia", team=self.team, role="planner")
        self.client.force_login(pia)
        url = reverse("admin:campaigns_team_change", args=[self.team.pk])
        self.assertNotContains(self.client.get(url), "nobody@example.org")
        self.assertEqual(self.client.post(url, {"name": "nlp"}).status_code, 403)


class AcceptingTheLink(TestCase):
    @classmethod
    def setUpTestData(cls) -> None:
        cls.team = Team.objects.create(name="nlp")
        cls.owner = make_user("olga", team=cls.team, role="owner")
        cls.bob = make_user("bob", email="bob@example.org", password=PASSWORD)

    def invite(self, email: str, role: str = "planner", team: Team | None = None) -> str:
        owner = Client()
        owner.force_login(self.owner)
        with self.captureOnCommitCallbacks(execute=True):
            invite_on_the_team_page(owner, team or self.team, email, role)
        return link_of(mail.outbox[-1])

    def test_an_existing_account_joins_only_once_its_owner_signs_in_and_accepts(self) -> None:
        link = self.invite("bob@example.org", role="viewer")
        page = self.client.get(link)
        self.assertContains(page, "Sign in to accept")
        self.assertFalse(self.team.memberships.filter(user=self.bob).exists())
        # Signing in is not accepting: the page asks again.
        self.client.force_login(self.bob)
        self.assertContains(self.client.get(link), "Join nlp as bob")
        self.assertFalse(self.team.memberships.filter(user=self.bob).exists())
        answer = self.client.post(link, {"action": "accept"})
        self.assertRedirects(answer, reverse("admin:index"), fetch_redirect_response=False)
        self.assertEqual(self.team.memberships.get(user=self.bob).role, "viewer")
        invitation = Invitation.objects.get()
        self.assertEqual(invitation.accepted_by, self.bob)

    def test_a_new_person_creates_their_account_and_is_signed_in(self) -> None:
        link = self.invite("alice@example.org", role="planner")
        answer = create_account(self.client, link, "alice")
        self.assertEqual(answer.status_code, 302)
        alice = get_user_model().objects.get(username="alice")
        self.assertEqual(
            (alice.email, alice.is_staff, alice.is_superuser), ("alice@example.org", True, False)
        )
        self.assertTrue(alice.check_password(PASSWORD))
        self.assertEqual(self.team.memberships.get(user=alice).role, "planner")
        self.assertEqual(self.client.get(reverse("admin:index")).status_code, 200)

    def test_a_taken_username_or_a_weak_password_is_refused_naming_the_field(self) -> None:
        link = self.invite("alice@example.org")
        taken = create_account(self.client, link, "bob")
        self.assertEqual(taken.status_code, 400)
        self.assertIn("username", taken.context["form"].errors)
        weak = self.client.post(
            link, {"action": "create", "username": "alice", "password1": "123", "password2": "123"}
        )
        self.assertEqual(weak.status_code, 400)
        self.assertIn("password2", weak.context["form"].errors)
        self.assertEqual(Invitation.objects.get().state, "pending")

    def test_a_link_works_once(self) -> None:
        link = self.invite("alice@example.org")
        self.assertEqual(create_account(self.client, link, "alice").status_code, 302)
        other = Client()
        self.assertEqual(create_account(other, link, "mallory").status_code, 404)
        other.force_login(self.bob)
        refused = other.post(link, {"action": "accept"})
        self.assertEqual(refused.status_code, 404)
        self.assertContains(refused, "does not work", status_code=404)
        self.assertFalse(get_user_model().objects.filter(username="mallory").exists())
        self.assertFalse(self.team.memberships.filter(user=self.bob).exists())

    def test_an_expired_link_is_refused(self) -> None:
        link = self.invite("alice@example.org")
        Invitation.objects.update(expires_at=timezone.now() - timedelta(seconds=1))
        self.assertEqual(self.client.get(link).status_code, 404)
        self.assertEqual(create_account(self.client, link, "alice").status_code, 404)
        self.assertFalse(get_user_model().objects.filter(username="alice").exists())

    def test_a_new_invitation_of_the_address_replaces_the_pending_one(self) -> None:
        first = self.invite("alice@example.org", role="owner")
        second = self.invite("alice@example.org", role="viewer")
        self.assertEqual(create_account(self.client, first, "alice").status_code, 404)
        self.assertEqual(create_account(self.client, second, "alice").status_code, 302)
        self.assertEqual(self.team.memberships.get(user__username="alice").role, "viewer")

    def test_an_unknown_link_says_the_same_as_a_used_one(self) -> None:
        answer = self.client.get("/accounts/invitations/not-a-token/")
        self.assertContains(answer, "does not work", status_code=404)

    def test_the_same_signed_in_person_may_accept_two_invitations(self) -> None:
        vision = Team.objects.create(name="vision")
        make_user("vera", team=vision, role="owner")
        first = self.invite("bob@example.org")
        self.owner.memberships.create(team=vision, role="owner")
        second = self.invite("bob@example.org", team=vision)
        self.client.force_login(self.bob)
        for link in (first, second):
            self.assertEqual(self.client.post(link, {"action": "accept"}).status_code, 302)
        self.assertEqual(set(self.bob.teams.values_list("name", flat=True)), {"nlp", "vision"})


def in_threads(*calls: Any) -> list[Any]:
    """Run each call in its own thread, released together; each thread has its own connection."""
    barrier = threading.Barrier(len(calls))
    answers: list[Any] = [None] * len(calls)

    def worker(index: int) -> None:
        try:
            barrier.wait()
            answers[index] = calls[index]()
        finally:
            connection.close()

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(len(calls))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    return answers


# The real password hasher: an account's creation then takes a while inside the accept's
# transaction, so a second accept that did not wait for the first would overlap it.
@pytest.mark.postgres
@override_settings(PASSWORD_HASHERS=["django.contrib.auth.hashers.PBKDF2PasswordHasher"])
class RacingAccepts(TransactionTestCase):
    def setUp(self) -> None:
        self.nlp = Team.objects.create(name="nlp")
        self.vision = Team.objects.create(name="vision")
        owner = make_user("olga", team=self.nlp, role="owner")
        Membership.objects.create(team=self.vision, user=owner, role="owner")
        self.owner = Client()
        self.owner.force_login(owner)

    def invite(self, team: Team, email: str) -> str:
        invite_on_the_team_page(self.owner, team, email, "planner")
        return link_of(mail.outbox[-1])

    def test_two_accepts_of_one_link_make_one_account_and_one_membership(self) -> None:
        link = self.invite(self.nlp, "alice@example.org")
        answers = in_threads(
            lambda: create_account(Client(), link, "alice"),
            lambda: create_account(Client(), link, "mallory"),
        )
        self.assertEqual(sorted(a.status_code for a in answers), [302, 404])
        self.assertEqual(get_user_model().objects.filter(email="alice@example.org").count(), 1)
        self.assertEqual(self.nlp.memberships.count(), 2)  # the owner and one invitee

    def test_two_invitations_of_one_address_never_make_one_account_of_two(self) -> None:
        to_nlp = self.invite(self.nlp, "sam@example.org")
        to_vision = self.invite(self.vision, "sam@example.org")
        answers = in_threads(
            lambda: create_account(Client(), to_nlp, "sam"),
            lambda: create_account(Client(), to_vision, "sam"),
        )
        self.assertEqual(sorted(a.status_code for a in answers), [302, 400])
        [sam] = get_user_model().objects.filter(username__iexact="sam")
        self.assertEqual(sam.memberships.count(), 1)
        # The refused one's link still works: that person chooses another name.
        refused = to_nlp if answers[0].status_code == 400 else to_vision
        self.assertEqual(create_account(Client(), refused, "sam2").status_code, 302)
        for user in get_user_model().objects.filter(email="sam@example.org"):
            self.assertEqual(user.memberships.count(), 1)
