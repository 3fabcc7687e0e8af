"""A user's API token finds its user, whole, and nothing else (campaigns/models/api_tokens.py:
one written-out statement instead of the ORM's, for its CPU)."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.forms.models import model_to_dict
from django.test import TestCase

from campaigns.models import ApiToken, Team
from campaigns.services.keys import issue_api_token
from campaigns.tests.factories import make_user, token_header


class ATokenFindsItsUser(TestCase):
    @classmethod
    def setUpTestData(cls) -> None:
        cls.team = Team.objects.create(name="nlp")
        cls.olga = make_user("olga", team=cls.team, role="owner")
        cls.pia = make_user("pia", team=cls.team)
        cls.token, cls.raw = issue_api_token(owner=cls.olga, name="laptop")
        issue_api_token(owner=cls.pia)

    def test_the_user_found_is_the_stored_row_every_field_of_it(self) -> None:
        found = ApiToken.user_for(self.raw)
        stored = get_user_model().objects.get(pk=self.olga.pk)
        self.assertEqual(found, stored)
        self.assertEqual(model_to_dict(found), model_to_dict(stored))
        self.assertEqual(found.password, stored.password)
        self.assertEqual(found.last_login, stored.last_login)
        self.assertFalse(found._state.adding)
        self.assertEqual(found._state.db, "default")

    def test_the_user_found_can_be_saved_and_read_as_any_other(self) -> None:
        found = ApiToken.user_for(self.raw)
        found.first_name = "Olga"
        found.save(update_fields=["first_name"])
        self.assertEqual(get_user_model().objects.get(pk=self.olga.pk).first_name, "Olga")
        self.assertEqual(found.groups.count(), self.olga.groups.count())

    def test_an_unknown_token_a_deleted_one_and_an_inactive_user_find_no_one(self) -> None:
        self.assertIsNone(ApiToken.user_for("cdt_not-a-token"))
        self.assertIsNone(ApiToken.user_for(""))
        self.assertIsNone(ApiToken.user_for(self.raw[:-1]))
        token, raw = issue_api_token(owner=self.pia, name="ci")
        self.assertEqual(ApiToken.user_for(raw), self.pia)
        token.delete()
        self.assertIsNone(ApiToken.user_for(raw))
        get_user_model().objects.filter(pk=self.olga.pk).update(is_active=False)
        self.assertIsNone(ApiToken.user_for(self.raw))

    def test_each_of_two_users_tokens_finds_its_own(self) -> None:
        _, second = issue_api_token(owner=self.olga, name="ci")
        self.assertEqual(ApiToken.user_for(second), self.olga)
        self.assertEqual(ApiToken.user_for(self.raw), self.olga)

    def test_the_api_answers_a_token_as_its_user_and_refuses_a_bad_one(self) -> None:
        url = f"/api/v1/teams/{self.team.pk}/"
        answer = self.client.get(url, HTTP_AUTHORIZATION=f"Token {self.raw}")
        self.assertEqual(answer.status_code, 200)
        self.assertEqual(answer.json()["name"], "nlp")
        refused = self.client.get(url, HTTP_AUTHORIZATION=f"Token {self.raw}x")
        self.assertEqual(refused.status_code, 401)
        self.assertEqual(self.client.get(url, **token_header(self.pia)).status_code, 200)
